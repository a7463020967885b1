package org.slf4j;
/** Logger stand-in: warnings and errors go to stderr, the rest is dropped. */
public class Logger {
    private final String name;
    Logger(String name) { this.name = name; }
    public void warn(String m) { System.err.println("WARN " + name + ": " + m); }
    public void warn(String m, Throwable t) { warn(m + ": " + t); }
    public void error(String m) { System.err.println("ERROR " + name + ": " + m); }
    public void error(String m, Throwable t) { error(m + ": " + t); }
    public void info(String m) { }
    public void info(String m, Throwable t) { }
    public void debug(String m) { }
    public void debug(String m, Throwable t) { }
    public void trace(String m) { }
}
