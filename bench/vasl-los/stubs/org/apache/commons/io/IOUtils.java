package org.apache.commons.io;
public class IOUtils {
    public static void closeQuietly(java.io.Closeable c) {
        if (c != null) try { c.close(); } catch (java.io.IOException ignored) { }
    }
}
