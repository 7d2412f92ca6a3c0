// Token: the czxid of InterProcessMutex's lock node, read with checkExists() once Curator granted the lock: contenders are served in creation order, so each new holder's sequential node was created by a later ZooKeeper transaction (larger czxid).
//
// fencecheck client adapter (protocol 2) for Apache Curator's InterProcessMutex
// (Debian libcurator-recipes-java). JSON lines on stdin/stdout, free text on stderr;
// see docs/adapters.md. JSON with Jackson, which Curator and ZooKeeper already depend on.
//
// The client: CuratorFrameworkFactory.builder() with sessionTimeoutMs = ttl (client option
// expiry: library keeps Curator's default), connectionTimeoutMs = the operation timeout
// (timeout: library keeps Curator's default) and ExponentialBackoffRetry(1000, 3).
// One InterProcessMutex for the whole run: acquire(acquire timeout), release().
// After Curator grants the lock the adapter reads its node's czxid with checkExists(); a node
// that read finds gone (or a read that fails) is still the grant Curator answered: ok without
// a token, with read_back saying what the read found.
// check is Curator's own belief, isAcquiredInThisProcess(); the server is not read.
// Events: suspended, lost, reconnected from Curator's connection state listener.
// An error leaves the client and the mutex as they are: the next request uses them.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class CuratorAdapter {
    static final ObjectMapper JSON = new ObjectMapper();
    static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    /** InterProcessMutex names its node through the protected getLockPath(); this exposes it. */
    static class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) { super(client, path); }
        String lockNode() { return getLockPath(); }
    }

    static synchronized void send(ObjectNode o) {
        OUT.print(o.toString() + "\n");
        OUT.flush();
    }

    static ObjectNode reply(JsonNode id, String type) {
        ObjectNode o = JSON.createObjectNode();
        o.set("id", id);
        o.put("type", type);
        return o;
    }

    static void event(String name, String detail) {
        ObjectNode o = JSON.createObjectNode();
        o.put("event", name);
        o.put("detail", detail);
        send(o);
    }

    /** info for Curator's and ZooKeeper's documented errors; info with exception for anything else. */
    static ObjectNode error(JsonNode id, Exception e) {
        ObjectNode o = reply(id, "info");
        o.put("error", e.toString());
        if (!(e instanceof KeeperException || e instanceof InterruptedException)) {
            o.put("exception", true);
            e.printStackTrace();
        }
        return o;
    }

    static String curatorVersion() {
        try (InputStream in = InterProcessMutex.class.getResourceAsStream(
                "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (Exception e) {
            return "unknown";
        }
    }

    CuratorFramework client;
    Mutex mutex;
    long acquireTimeoutMs;

    ObjectNode init(JsonNode id, JsonNode req) throws Exception {
        List<String> eps = new ArrayList<>();
        req.get("endpoints").forEach(e -> eps.add(e.asText()));
        String connect = String.join(",", eps);
        int ttl = req.get("ttl_ms").asInt();
        acquireTimeoutMs = req.get("acquire_timeout_ms").asLong();
        // An older worker (protocol 1) names no operation timeout: 5 s.
        int opTimeoutMs = req.path("op_timeout_ms").asInt(5000);
        JsonNode options = req.path("options");
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .retryPolicy(new ExponentialBackoffRetry(1000, 3));
        if (!options.path("expiry").asText("").equals("library")) {
            builder.sessionTimeoutMs(ttl);
        }
        if (!options.path("timeout").asText("").equals("library")) {
            builder.connectionTimeoutMs(opTimeoutMs);
        }
        client = builder.build();
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            client.close();
            ObjectNode o = reply(id, "fail");
            o.put("error", "curator: not connected to " + connect + " within 10 s");
            return o;
        }
        // Listen only once connected: no event before the init reply.
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED) {
                event("suspended", "curator: SUSPENDED (connection to ZooKeeper lost)");
            } else if (state == ConnectionState.LOST) {
                event("lost", "curator: LOST (session expired or presumed expired)");
            } else if (state == ConnectionState.RECONNECTED) {
                event("reconnected", "curator: RECONNECTED, session 0x"
                        + Long.toHexString(sessionId(c)));
            }
        });
        mutex = new Mutex(client, "/" + req.get("lock").asText());
        ObjectNode o = reply(id, "ok");
        o.put("library", "curator");
        o.put("version", curatorVersion());
        o.put("token", "the lock node's czxid");
        o.putArray("capabilities").add("release").add("check").add("events");
        return o;
    }

    static long sessionId(CuratorFramework c) {
        try {
            return c.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    ObjectNode acquire(JsonNode id) {
        try {
            if (!mutex.acquire(acquireTimeoutMs, TimeUnit.MILLISECONDS)) {
                // Curator deletes its contender node before returning false.
                ObjectNode o = reply(id, "fail");
                o.put("error", "InterProcessMutex.acquire: not acquired within " + acquireTimeoutMs + " ms");
                return o;
            }
        } catch (Exception e) {
            return error(id, e);
        }
        // Granted: whatever the read-back finds, the answer is ok.
        String node = mutex.lockNode();
        ObjectNode o = reply(id, "ok");
        o.put("lease", node);
        try {
            Stat stat = client.checkExists().forPath(node);
            if (stat == null) {
                o.put("read_back", "lock node " + node + " gone");
            } else {
                o.put("token", stat.getCzxid());
            }
        } catch (Exception e) {
            o.put("read_back", "checkExists(" + node + ") raised " + e);
        }
        return o;
    }

    ObjectNode release(JsonNode id) {
        try {
            mutex.release();
            return reply(id, "ok");
        } catch (IllegalMonitorStateException e) {
            ObjectNode o = reply(id, "fail");
            o.put("reason", "not-owner");
            o.put("error", e.toString());
            return o;
        } catch (Exception e) {
            return error(id, e);
        }
    }

    ObjectNode check(JsonNode id) {
        ObjectNode o = reply(id, "ok");
        o.put("held", mutex.isAcquiredInThisProcess());
        return o;
    }

    public static void main(String[] args) throws Exception {
        CuratorAdapter a = new CuratorAdapter();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode req = JSON.readTree(line);
            JsonNode id = req.get("id");
            String op = req.path("op").asText();
            ObjectNode r;
            switch (op) {
                case "init": r = a.init(id, req); break;
                case "acquire": r = a.acquire(id); break;
                case "release": r = a.release(id); break;
                case "check": r = a.check(id); break;
                default:
                    r = reply(id, "fail");
                    r.put("error", "unsupported op " + op);
            }
            send(r);
        }
        if (a.client != null) a.client.close();
    }
}
