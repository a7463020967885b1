package VASSAL.build.module.map.boardPicker.board;
/** Only the attribute keys of a VASSAL hex grid that the legacy "data" file reader uses. */
public class HexGrid {
    public static final String X0 = "x0";
    public static final String Y0 = "y0";
    public static final String DX = "dx";
    public static final String DY = "dy";
    public static final String SNAP_SCALE = "snapscale";
}
