package VASL.LOS;
import java.util.HashSet;
import VASL.LOS.Map.Hex;
import VASL.LOS.Map.Terrain;
import VASL.LOS.counters.OBA;
import VASL.LOS.counters.Smoke;
import VASL.LOS.counters.Vehicle;
/**
 * Stand-in for the game-state bridge: the bench runs LOS with no counters on the map,
 * and passes null to Map.LOS anyway; this class only has to exist for Map.java to compile.
 */
public class VASLGameInterface {
    public HashSet<Vehicle> getVehicles(Hex h) { return null; }
    public HashSet<Smoke> getSmoke(Hex h) { return null; }
    public Terrain getTerrain(Hex h) { return null; }
    public HashSet<OBA> getOBA(Hex h) { return null; }
    public HashSet<OBA> getOBA() { return null; }
}
