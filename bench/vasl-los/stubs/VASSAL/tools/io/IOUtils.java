package VASSAL.tools.io;
/** Only the quiet-close helpers VASL's board reader calls. */
public class IOUtils {
    public static void closeQuietly(java.io.Closeable c) {
        if (c != null) try { c.close(); } catch (java.io.IOException ignored) { }
    }
    public static void closeQuietly(java.util.zip.ZipFile z) {
        if (z != null) try { z.close(); } catch (java.io.IOException ignored) { }
    }
}
