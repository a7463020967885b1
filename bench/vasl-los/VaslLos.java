// Reference harness: runs VASL's own LOS engine (VASL.LOS.Map, compiled from a VASL
// checkout the user names at run time) over real board archives and prints its verdicts.
// This file is our own code; it only calls VASL's public API.

import VASL.LOS.Map.Hex;
import VASL.LOS.Map.LOSResult;
import VASL.LOS.Map.Location;
import VASL.LOS.Map.Map;
import VASL.build.module.map.boardArchive.BoardArchive;
import VASL.build.module.map.boardArchive.SharedBoardMetadata;

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Usage: VaslLos --shared SharedBoardMetadata.xml --boards DIR --layout LAYOUT
 *                [--pairs N] [--seed S] [--repeat R] [--max-range R] [--out FILE]
 *                [--pairs-file FILE] [--dump-hexes FILE] [--levels]
 *
 * Pairs are drawn with java.util.Random(seed): from = any hex, to = any other hex
 * (within --max-range hexes by VASL's range, when given). --pairs-file takes the pairs from
 * a file instead (one "FROM TO" per line, names as printed here, a "from" header is skipped),
 * so VASL can be timed on exactly the pairs another engine answered.
 * --dump-hexes writes what VASL derived for every hex (LOS point, base level, terrain,
 * hexside terrain).
 * --levels asks from and to upper levels too: each end is, half the time, a hex that is
 * raised (a building with upper levels, or a hill: base level above 0), and in a building
 * with upper levels its Location is, with even odds, one of those levels (VASL's "Level n"
 * Locations; rooftops and cellars are left out) rather than the ground.
 *
 * LAYOUT: boards west to east separated by ',', rows north to south separated by '/',
 * a trailing 'r' rotates a board 180 degrees: "1", "1,2r/3,4". Board "1" is archive
 * bd01 (or bd1); any other name is tried as bd&lt;name&gt; then as a file name.
 *
 * Output (TSV, one line per pair, header first):
 *   layout  from  to  blocked  hindrances  reason  from_level  to_level
 * blocked is 1/0, hindrances is VASL's LOSResult.getHindrance() (0 when blocked),
 * reason is VASL's reason text plus "@x,y" (map pixel where LOS was blocked), or empty.
 * Hex names are VASL's (A1, GG10, B0); with several boards they are prefixed with
 * the board name (1A1, 2rGG10 is written 2GG10: the board's name without the 'r').
 * A pair on which VASL itself throws (it does, rarely, e.g. a null neighbour hex beside a
 * board edge) is printed with blocked and hindrances "E" and the exception in reason.
 * from_level and to_level are the ends' Location heights above their hex's ground, in
 * levels (0 at ground; 1, 2 a building's upper levels).
 * Timing goes to stderr.
 */
public class VaslLos {

    static final int GEO_W = 1800, GEO_H = 645;   // geomorphic board image in pixels

    public static void main(String[] args) throws Exception {
        String shared = null, boardsDir = null, layout = "1", out = null;
        int pairs = 5000, repeat = 3, maxRange = 0;
        String pairsFile = null, dumpHexes = null;
        long seed = 37;
        boolean levels = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--shared": shared = args[++i]; break;
                case "--boards": boardsDir = args[++i]; break;
                case "--layout": layout = args[++i]; break;
                case "--pairs": pairs = Integer.parseInt(args[++i]); break;
                case "--seed": seed = Long.parseLong(args[++i]); break;
                case "--repeat": repeat = Integer.parseInt(args[++i]); break;
                case "--out": out = args[++i]; break;
                case "--max-range": maxRange = Integer.parseInt(args[++i]); break;
                case "--pairs-file": pairsFile = args[++i]; break;
                case "--dump-hexes": dumpHexes = args[++i]; break;
                case "--levels": levels = true; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (shared == null || boardsDir == null) {
            System.err.println("usage: VaslLos --shared SharedBoardMetadata.xml --boards DIR --layout 1|1,2r/3,4 [--pairs N] [--seed S] [--repeat R] [--max-range R] [--pairs-file FILE] [--dump-hexes FILE] [--levels] [--out FILE]");
            System.exit(2);
        }

        SharedBoardMetadata sbm = new SharedBoardMetadata();
        try (InputStream in = new FileInputStream(shared)) {
            sbm.parseSharedBoardMetadataFile(in);
        }

        // parse the layout
        List<String[]> rows = new ArrayList<>();
        for (String r : layout.split("/")) rows.add(r.split(","));
        int nRows = rows.size(), nCols = rows.get(0).length;
        for (String[] r : rows)
            if (r.length != nCols) throw new IllegalArgumentException("layout rows differ in length: " + layout);
        boolean several = nRows * nCols > 1;

        long t0 = System.nanoTime();
        Map map;
        String[][] owner;   // board name owning each hex of the (composite) map
        if (!several) {
            String name = rows.get(0)[0];
            map = loadBoard(sbm, boardsDir, name);
            owner = null;
        } else {
            // as VASL's ASLMap does: one map over the whole board area, each board inserted at
            // the hex under its upper-left corner (boards touch: 1800 x 645 px apart)
            int mapW = nCols * GEO_W, mapH = nRows * GEO_H;
            map = new Map(BoardArchive.GEO_HEX_WIDTH, BoardArchive.GEO_HEX_HEIGHT,
                    (int) Math.round(mapW / BoardArchive.GEO_HEX_WIDTH) + 1,
                    (int) Math.round(mapH / BoardArchive.GEO_HEX_HEIGHT),
                    BoardArchive.GEO_A1_Center.x, BoardArchive.GEO_A1_Center.y,
                    mapW, mapH, sbm.getTerrainTypes(), "Normal", false);
            Hex[][] grid = map.getHexGrid();
            owner = new String[grid.length][];
            for (int c = 0; c < grid.length; c++) owner[c] = new String[grid[c].length];
            for (int br = 0; br < nRows; br++) {
                for (int bc = 0; bc < nCols; bc++) {
                    String name = rows.get(br)[bc];
                    Map b = loadBoard(sbm, boardsDir, name);
                    Hex ul = map.gridToHex(bc * GEO_W, br * GEO_H + 1);
                    if (!map.insertMap(b, ul))
                        throw new IllegalStateException("VASL refused to insert board " + name);
                    Hex[][] bg = b.getHexGrid();
                    for (int x = 0; x < bg.length; x++)
                        for (int y = 0; y < bg[x].length; y++) {
                            int c = x + ul.getColumnNumber(), r = y + ul.getRowNumber();
                            if (c < owner.length && r < owner[c].length) owner[c][r] = baseName(name);
                        }
                }
            }
        }
        long tLoad = System.nanoTime() - t0;
        System.err.printf("map %s: %d x %d hexes, %d x %d px, built in %.1f ms%n", layout,
                map.getWidth(), map.getHeight(), map.getGridWidth(), map.getGridHeight(), tLoad / 1e6);

        // every hex of the grid, half hexes on board edges included
        List<Hex> hexes = new ArrayList<>();
        List<String> names = new ArrayList<>();
        Hex[][] grid = map.getHexGrid();
        for (int c = 0; c < grid.length; c++)
            for (int r = 0; r < grid[c].length; r++) {
                hexes.add(grid[c][r]);
                names.add((owner != null ? owner[c][r] : "") + grid[c][r].getName());
            }

        if (dumpHexes != null) dumpHexes(map, grid, owner, dumpHexes);

        int[] from, to;
        if (pairsFile != null) {
            // explicit pairs: lines "FROM<TAB>TO" (or space separated) with the names printed here
            java.util.Map<String, Integer> byName = new java.util.HashMap<>();
            for (int k = 0; k < names.size(); k++) byName.put(names.get(k).toUpperCase(), k);
            List<int[]> ps = new ArrayList<>();
            for (String line : java.nio.file.Files.readAllLines(new File(pairsFile).toPath())) {
                String[] f = line.trim().split("[\\t ]+");
                if (f.length < 2 || f[0].startsWith("#") || f[0].equalsIgnoreCase("from")) continue;
                Integer a = byName.get(f[0].toUpperCase()), b = byName.get(f[1].toUpperCase());
                if (a == null || b == null) throw new IllegalArgumentException("unknown hex in pairs file: " + line);
                ps.add(new int[]{a, b});
            }
            pairs = ps.size();
            from = new int[pairs];
            to = new int[pairs];
            for (int k = 0; k < pairs; k++) { from[k] = ps.get(k)[0]; to[k] = ps.get(k)[1]; }
        } else {
            from = new int[pairs];
            to = new int[pairs];
        }
        // --levels: the hexes with a Location above their ground (a building's upper levels)
        // or on a hill (base level above 0); each end is one of those half the time
        List<Integer> raised = new ArrayList<>();
        for (int k = 0; k < hexes.size(); k++)
            if (upperLevels(hexes.get(k)).size() > 0 || hexes.get(k).getBaseHeight() > 0) raised.add(k);
        Random rng = new Random(seed);
        for (int i = 0; i < pairs && pairsFile == null; i++) {
            int a = pick(rng, hexes.size(), levels ? raised : null), b;
            do { b = pick(rng, hexes.size(), levels ? raised : null); }
            while (b == a || (maxRange > 0
                    && Map.range(hexes.get(a), hexes.get(b), map.getMapConfiguration()) > maxRange));
            from[i] = a;
            to[i] = b;
        }
        // each end's Location: its ground, or with --levels one of the building's upper levels
        Location[] fromLoc = new Location[pairs], toLoc = new Location[pairs];
        for (int i = 0; i < pairs; i++) {
            fromLoc[i] = levels ? pickLevel(rng, hexes.get(from[i])) : hexes.get(from[i]).getCenterLocation();
            toLoc[i] = levels ? pickLevel(rng, hexes.get(to[i])) : hexes.get(to[i]).getCenterLocation();
        }

        // compute (first pass is also the cold timing), then repeat for warm timings
        boolean[] blocked = new boolean[pairs];
        int[] hind = new int[pairs];
        String[] reason = new String[pairs];
        boolean[] failed = new boolean[pairs];
        long[] ns = new long[pairs];
        LOSResult res = new LOSResult();
        for (int pass = 0; pass < Math.max(1, repeat) && pairs > 0; pass++) {
            long passStart = System.nanoTime();
            for (int i = 0; i < pairs; i++) {
                Location s = fromLoc[i];
                Location t = toLoc[i];
                long a = System.nanoTime();
                RuntimeException failure = null;
                try {
                    map.LOS(s, false, t, false, res, null);
                } catch (RuntimeException e) {
                    failure = e;   // VASL itself fails on a few pairs (e.g. a null neighbour off the map edge)
                }
                long d = System.nanoTime() - a;
                if (failure != null) {
                    if (pass == 0) {
                        failed[i] = true;
                        StackTraceElement[] st = failure.getStackTrace();
                        reason[i] = "VASL exception: " + failure.getClass().getSimpleName()
                                + (st.length > 0 ? " at " + st[0].getMethodName() + ":" + st[0].getLineNumber() : "");
                    }
                } else if (pass == 0) {
                    blocked[i] = res.isBlocked();
                    hind[i] = res.isBlocked() ? 0 : res.getHindrance();
                    String why = res.getReason() == null ? "" : res.getReason().replaceAll("[\t\r\n]+", " ");
                    if (res.isBlocked() && res.getBlockedAtPoint() != null)
                        why += "@" + res.getBlockedAtPoint().x + "," + res.getBlockedAtPoint().y;
                    reason[i] = why;
                } else if (!failed[i] && res.isBlocked() != blocked[i]) {
                    throw new IllegalStateException("VASL's verdict changed between passes for pair " + i);
                }
                ns[i] = d;
            }
            long total = System.nanoTime() - passStart;
            long[] sorted = ns.clone();
            Arrays.sort(sorted);
            long sum = 0;
            for (long v : ns) sum += v;
            System.err.printf("pass %d (%s): %d LOS calls, total %.1f ms (incl. loop), sum of calls %.1f ms, "
                            + "mean %.1f us, p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us%n",
                    pass + 1, pass == 0 ? "cold" : "warm", pairs, total / 1e6, sum / 1e6, sum / 1e3 / pairs,
                    sorted[pairs / 2] / 1e3, sorted[(int) (pairs * 0.9)] / 1e3,
                    sorted[(int) (pairs * 0.99)] / 1e3, sorted[pairs - 1] / 1e3);
        }

        int nBlocked = 0, nHind = 0, nFailed = 0;
        PrintStream o = out == null ? System.out : new PrintStream(new File(out), "UTF-8");
        o.println("layout\tfrom\tto\tblocked\thindrances\treason\tfrom_level\tto_level");
        for (int i = 0; i < pairs; i++) {
            if (failed[i]) {
                nFailed++;
                o.println(layout + "\t" + names.get(from[i]) + "\t" + names.get(to[i]) + "\tE\tE\t" + reason[i]
                        + "\t" + fromLoc[i].getBaseHeight() + "\t" + toLoc[i].getBaseHeight());
                continue;
            }
            if (blocked[i]) nBlocked++;
            else if (hind[i] > 0) nHind++;
            o.println(layout + "\t" + names.get(from[i]) + "\t" + names.get(to[i]) + "\t"
                    + (blocked[i] ? 1 : 0) + "\t" + hind[i] + "\t" + reason[i]
                    + "\t" + fromLoc[i].getBaseHeight() + "\t" + toLoc[i].getBaseHeight());
        }
        o.flush();
        if (out != null) o.close();
        System.err.printf("verdicts: %d blocked, %d clear with hindrance, %d clear, %d VASL exceptions (E)%n",
                nBlocked, nHind, pairs - nBlocked - nHind - nFailed, nFailed);
    }

    /** One line per hex: what VASL derived for it (for checking an importer against VASL). */
    static void dumpHexes(Map map, Hex[][] grid, String[][] owner, String file) throws Exception {
        try (PrintStream o = new PrintStream(new File(file), "UTF-8")) {
            o.println("hex\tcol\trow\tlos_x\tlos_y\tbase_level\tterrain\tdepression\tstairway\thexsides_N_NE_SE_S_SW_NW");
            for (int c = 0; c < grid.length; c++)
                for (int r = 0; r < grid[c].length; r++) {
                    Hex h = grid[c][r];
                    Location l = h.getCenterLocation();
                    StringBuilder sides = new StringBuilder();
                    for (int k = 0; k < 6; k++) {
                        if (k > 0) sides.append(',');
                        sides.append(h.getHexsideTerrain(k) == null ? "-" : h.getHexsideTerrain(k).getName());
                    }
                    o.println((owner != null ? owner[c][r] : "") + h.getName() + "\t" + c + "\t" + r + "\t"
                            + l.getLOSPoint().x + "\t" + l.getLOSPoint().y + "\t" + h.getBaseHeight() + "\t"
                            + l.getTerrain().getName() + "\t"
                            + (l.getDepressionTerrain() == null ? "-" : l.getDepressionTerrain().getName()) + "\t"
                            + (h.hasStairway() ? 1 : 0) + "\t" + sides);
                }
        }
    }

    /** A hex index: any hex, or half the time one of `raised` when it is given and not empty. */
    static int pick(Random rng, int n, List<Integer> raised) {
        if (raised != null && !raised.isEmpty() && rng.nextBoolean()) return raised.get(rng.nextInt(raised.size()));
        return rng.nextInt(n);
    }

    /** A building's upper level Locations (VASL's "Level n"; rooftops and cellars left out). */
    static List<Location> upperLevels(Hex h) {
        List<Location> up = new ArrayList<>();
        for (Location l = h.getCenterLocation().getUpLocation(); l != null; l = l.getUpLocation())
            if (l.getName() != null && l.getName().contains(" Level ")) up.add(l);
        return up;
    }

    /** The hex's ground Location or, with even odds, one of its upper levels when it has any. */
    static Location pickLevel(Random rng, Hex h) {
        List<Location> up = upperLevels(h);
        if (up.isEmpty() || rng.nextBoolean()) return h.getCenterLocation();
        return up.get(rng.nextInt(up.size()));
    }

    static String baseName(String n) {
        return n.endsWith("r") ? n.substring(0, n.length() - 1) : n;
    }

    /** Reads one board's LOS data the way VASL's ASLMap does (unrotated, uncropped), rotating it if asked. */
    static Map loadBoard(SharedBoardMetadata sbm, String dir, String name) throws Exception {
        boolean rotated = name.endsWith("r");
        String base = baseName(name);
        String archive = null;
        List<String> tries = new ArrayList<>();
        if (base.matches("\\d")) tries.add("bd0" + base);
        tries.add("bd" + base);
        tries.add(base);
        for (String t : tries)
            if (new File(dir, t).isFile()) { archive = t; break; }
        if (archive == null) throw new IllegalArgumentException("no archive for board " + base + " in " + dir + " (tried " + tries + ")");
        BoardArchive ba = new BoardArchive(archive, dir, sbm);
        Map m = ba.getLOSData(sbm.getTerrainTypes(), "Normal", false, 0);
        if (m == null) throw new IllegalStateException("VASL could not read the LOS data of " + archive);
        if (rotated) m.flip();
        System.err.printf("board %s: archive %s version %s, %d x %d hexes%n", name, archive, ba.getVersion(),
                m.getWidth(), m.getHeight());
        return m;
    }
}
