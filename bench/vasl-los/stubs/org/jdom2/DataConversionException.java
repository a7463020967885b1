package org.jdom2;
public class DataConversionException extends JDOMException {
    public DataConversionException(String name, String type) { super("attribute " + name + " is not a " + type); }
}
