package org.jdom2;
/** A name/value pair with the typed getters VASL calls. */
public class Attribute {
    private final String name, value;
    public Attribute(String name, String value) { this.name = name; this.value = value; }
    public String getName() { return name; }
    public String getValue() { return value; }
    public int getIntValue() throws DataConversionException {
        try { return Integer.parseInt(value.trim()); } catch (NumberFormatException e) { throw new DataConversionException(name, "int"); }
    }
    public double getDoubleValue() throws DataConversionException {
        try { return Double.parseDouble(value.trim()); } catch (NumberFormatException e) { throw new DataConversionException(name, "double"); }
    }
    public float getFloatValue() throws DataConversionException {
        try { return Float.parseFloat(value.trim()); } catch (NumberFormatException e) { throw new DataConversionException(name, "float"); }
    }
    public boolean getBooleanValue() throws DataConversionException {
        String v = value.trim().toLowerCase();
        if (v.equals("true") || v.equals("yes") || v.equals("on") || v.equals("1")) return true;
        if (v.equals("false") || v.equals("no") || v.equals("off") || v.equals("0")) return false;
        throw new DataConversionException(name, "boolean");
    }
}
