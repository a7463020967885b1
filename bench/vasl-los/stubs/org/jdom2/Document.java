package org.jdom2;
public class Document {
    private final Element root;
    public Document(Element root) { this.root = root; }
    public Element getRootElement() { return root; }
}
