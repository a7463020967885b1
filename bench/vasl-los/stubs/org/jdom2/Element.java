package org.jdom2;
import java.util.ArrayList;
import java.util.List;
/** A read-only element wrapping the JDK's DOM element. */
public class Element {
    private final org.w3c.dom.Element e;
    public Element(org.w3c.dom.Element e) { this.e = e; }
    public String getName() { return e.getTagName(); }
    public List<Element> getChildren() { return kids(null); }
    public List<Element> getChildren(String name) { return kids(name); }
    public Element getChild(String name) { List<Element> k = kids(name); return k.isEmpty() ? null : k.get(0); }
    public String getAttributeValue(String name) { return e.hasAttribute(name) ? e.getAttribute(name) : null; }
    public Attribute getAttribute(String name) { return e.hasAttribute(name) ? new Attribute(name, e.getAttribute(name)) : null; }
    public String getText() { return e.getTextContent(); }
    public String getTextTrim() { return e.getTextContent().trim(); }
    public String getValue() { return e.getTextContent(); }
    private List<Element> kids(String name) {
        List<Element> out = new ArrayList<>();
        for (org.w3c.dom.Node n = e.getFirstChild(); n != null; n = n.getNextSibling())
            if (n instanceof org.w3c.dom.Element && (name == null || ((org.w3c.dom.Element) n).getTagName().equals(name)))
                out.add(new Element((org.w3c.dom.Element) n));
        return out;
    }
}
