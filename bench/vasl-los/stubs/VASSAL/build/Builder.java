package VASSAL.build;
import java.io.InputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
/** Only the XML-document helper VASL's SSRControls reader calls. */
public class Builder {
    public static Document createDocument(InputStream in) {
        try { return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in); }
        catch (Exception e) { throw new IllegalStateException("cannot parse XML", e); }
    }
}
