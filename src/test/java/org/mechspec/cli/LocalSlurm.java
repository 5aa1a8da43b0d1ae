package org.mechspec.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A one-node Slurm cluster for tests: munged, slurmctld and slurmd for this machine (its CPUs, no GPU), configured in
 * a folder of its own, bound to loopback only ({@code NoInAddrAny,NoCtldInAddrAny}), no accounting. Each daemon runs
 * in the foreground as this JVM's child and is stopped by its pid; {@link #close} cancels the cluster's jobs first.
 */
final class LocalSlurm implements AutoCloseable {
    final Path dir;
    final Path conf;
    private final List<Process> daemons = new ArrayList<>();

    private LocalSlurm(Path dir) {
        this.dir = dir;
        this.conf = dir.resolve("slurm.conf");
    }

    /** Null when this machine has the daemons and client commands, else what is missing. */
    static String missing() {
        List<String> absent = new ArrayList<>();
        for (String c : List.of("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/bin/squeue")) {
            if (!Files.isExecutable(Path.of(c))) {
                absent.add(c);
            }
        }
        return absent.isEmpty() ? null : "no Slurm here (" + String.join(", ", absent) + "; Debian: apt-get install slurm-wlm munge, as .ci/run does)";
    }

    static LocalSlurm start(Path dir) throws IOException, InterruptedException {
        LocalSlurm s = new LocalSlurm(dir);
        try {
            s.configure();
            s.daemon("munged", "/usr/sbin/munged", "--foreground", "--force", "--key-file=" + dir.resolve("munge.key"),
                    "--socket=" + dir.resolve("munge.socket"), "--pid-file=" + dir.resolve("munged.pid"),
                    "--log-file=" + dir.resolve("log/munged.log"), "--seed-file=" + dir.resolve("munge.seed"));
            s.waitFor(() -> Files.exists(dir.resolve("munge.socket")), "munged's socket");
            s.daemon("slurmctld", "/usr/sbin/slurmctld", "-D", "-f", s.conf.toString());
            s.daemon("slurmd", "/usr/sbin/slurmd", "-D", "-f", s.conf.toString());
            s.waitFor(() -> s.command("sinfo", "--noheader", "--format=%T").strip().matches("idle.*"), "the node to be idle");
            return s;
        } catch (IOException | InterruptedException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private void configure() throws IOException {
        Files.createDirectories(dir.resolve("log"));
        Files.createDirectories(dir.resolve("state"));
        Files.createDirectories(dir.resolve("spool"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        byte[] key = new byte[1024];
        new SecureRandom().nextBytes(key);
        Path keyFile = dir.resolve("munge.key");
        Files.write(keyFile, key);
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("r--------"));
        String host = InetAddress.getLocalHost().getHostName().split("\\.")[0];
        String user = System.getProperty("user.name");
        String text = String.join("\n",
                "ClusterName=mechspec-test",
                "SlurmctldHost=" + host + "(127.0.0.1)",
                "SlurmctldPort=" + freePort(),
                "SlurmdPort=" + freePort(),
                "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
                "AuthType=auth/munge", "CredType=cred/munge", "AuthInfo=socket=" + dir.resolve("munge.socket"),
                "SlurmUser=" + user, "SlurmdUser=" + user,
                "StateSaveLocation=" + dir.resolve("state"), "SlurmdSpoolDir=" + dir.resolve("spool"),
                "SlurmctldPidFile=" + dir.resolve("slurmctld.pid"), "SlurmdPidFile=" + dir.resolve("slurmd.pid"),
                "SlurmctldLogFile=" + dir.resolve("log/slurmctld.log"), "SlurmdLogFile=" + dir.resolve("log/slurmd.log"),
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
                "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU", "SchedulerType=sched/builtin", "ReturnToService=2",
                "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
                "NodeName=" + host + " NodeAddr=127.0.0.1 CPUs=" + Runtime.getRuntime().availableProcessors() + " State=UNKNOWN",
                "PartitionName=debug Nodes=" + host + " Default=YES MaxTime=INFINITE State=UP", "");
        Files.writeString(conf, text);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void daemon(String name, String... command) throws IOException {
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("log/" + name + ".out").toFile());
        b.environment().put("SLURM_CONF", conf.toString());
        daemons.add(b.start());
    }

    /** The environment a Slurm client command needs to reach this cluster. */
    Map<String, String> environment() {
        return Map.of("SLURM_CONF", conf.toString());
    }

    String command(String... command) {
        try {
            ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
            b.environment().putAll(environment());
            Process p = b.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            return out;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Waits (at most 60 s) for {@code ready}; fails naming what it waited for, with the daemons' logs' last lines. */
    void waitFor(java.util.function.BooleanSupplier ready, String what) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ready.getAsBoolean()) {
            for (Process d : daemons) {
                if (!d.isAlive()) {
                    throw new IllegalStateException("a Slurm daemon exited (" + d.info().command().orElse("?") + ", code " + d.exitValue()
                            + ") while waiting for " + what + ": " + logs());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("waited 60 s for " + what + ": " + logs());
            }
            Thread.sleep(250);
        }
    }

    String logs() throws IOException {
        StringBuilder b = new StringBuilder();
        try (var files = Files.list(dir.resolve("log"))) {
            for (Path f : files.sorted().toList()) {
                List<String> lines = Files.readAllLines(f);
                b.append(" [").append(f.getFileName()).append("] ").append(String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size())));
            }
        }
        return b.toString();
    }

    /** The daemons' pids, and every TCP socket they listen on that is not on loopback (must be none). */
    List<String> listenersBeyondLoopback() throws IOException {
        Set<String> inodes = new HashSet<>();
        for (Process d : daemons) {
            Path fds = Path.of("/proc", Long.toString(d.pid()), "fd");
            if (!Files.isDirectory(fds)) {
                continue;
            }
            try (var links = Files.list(fds)) {
                for (Path l : links.toList()) {
                    try {
                        String target = Files.readSymbolicLink(l).toString();
                        if (target.startsWith("socket:[")) {
                            inodes.add(target.substring(8, target.length() - 1));
                        }
                    } catch (IOException gone) {
                        // a descriptor closed while listing
                    }
                }
            }
        }
        List<String> beyond = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path t = Path.of(table);
            if (!Files.exists(t)) {
                continue;
            }
            for (String line : Files.readAllLines(t).subList(1, Files.readAllLines(t).size())) {
                String[] f = line.strip().split("\\s+");
                boolean listening = f[3].equals("0A");
                String local = f[1].split(":")[0];
                boolean loopback = local.equals("0100007F") || local.equals("00000000000000000000000001000000");
                if (listening && inodes.contains(f[9]) && !loopback) {
                    beyond.add(table + " " + f[1]);
                }
            }
        }
        return beyond;
    }

    /** Cancels the cluster's jobs, then stops each daemon (and what it started) by its pid. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (daemons.size() == 3) {
            command("scancel", "--full", "--user=" + System.getProperty("user.name"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!command("squeue", "--noheader").isBlank() && System.nanoTime() < deadline) {
                Thread.sleep(250);
            }
        }
        for (int i = daemons.size() - 1; i >= 0; i--) {
            Process d = daemons.get(i);
            List<ProcessHandle> children = d.descendants().toList();
            d.destroy();
            if (!d.waitFor(15, TimeUnit.SECONDS)) {
                d.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
            children.forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** True when every daemon this cluster started has exited. */
    boolean stopped() {
        return daemons.stream().noneMatch(Process::isAlive);
    }
}
