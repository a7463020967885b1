// Minimal stand-in for the jdom2 API used by VASL's board-archive readers (our own code).
package org.jdom2;
public class JDOMException extends Exception {
    public JDOMException() { super(); }
    public JDOMException(String m) { super(m); }
    public JDOMException(String m, Throwable c) { super(m, c); }
}
