package org.jdom2.input;
import java.io.InputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.jdom2.Document;
import org.jdom2.Element;
import org.jdom2.JDOMException;
/** Parses with the JDK's DOM parser. */
public class SAXBuilder {
    public Document build(InputStream in) throws JDOMException, java.io.IOException {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            return new Document(new Element(f.newDocumentBuilder().parse(in).getDocumentElement()));
        } catch (javax.xml.parsers.ParserConfigurationException | org.xml.sax.SAXException e) {
            throw new JDOMException("XML parse error", e);
        }
    }
}
