package org.mechspec.compute;

import java.util.Map;
import java.util.TreeMap;

/**
 * What the CUDA backend did on the device, counted as it happened: kernel launches by {@code module/kernel}, bytes
 * copied to and from the device, and device milliseconds between CUDA events around each launch (NaN where the driver
 * gave no time). On the emulated driver the events read the host clock, so its milliseconds are host time.
 */
public record DeviceWork(Map<String, Long> launches, long bytesToDevice, long bytesFromDevice, double deviceMs) {
    /** No device work: what the CPU backends report. */
    public static final DeviceWork NONE = new DeviceWork(Map.of(), 0, 0, 0);

    /** Copies the launch counts, so the record is immutable. */
    public DeviceWork {
        launches = java.util.Collections.unmodifiableMap(new TreeMap<>(launches));
    }

    /** Kernel launches of every kernel together. */
    public long kernelLaunches() {
        return launches.values().stream().mapToLong(Long::longValue).sum();
    }

    /** What was done after {@code earlier}, a snapshot of the same counters. */
    public DeviceWork since(DeviceWork earlier) {
        Map<String, Long> l = new TreeMap<>();
        launches.forEach((k, n) -> {
            long d = n - earlier.launches.getOrDefault(k, 0L);
            if (d != 0) {
                l.put(k, d);
            }
        });
        return new DeviceWork(l, bytesToDevice - earlier.bytesToDevice, bytesFromDevice - earlier.bytesFromDevice,
                deviceMs - earlier.deviceMs);
    }

    /** This work and {@code other} together. */
    public DeviceWork plus(DeviceWork other) {
        Map<String, Long> l = new TreeMap<>(launches);
        other.launches.forEach((k, n) -> l.merge(k, n, Long::sum));
        return new DeviceWork(l, bytesToDevice + other.bytesToDevice, bytesFromDevice + other.bytesFromDevice,
                deviceMs + other.deviceMs);
    }

    /** Whether nothing ran or moved on the device. */
    public boolean isEmpty() {
        return launches.isEmpty() && bytesToDevice == 0 && bytesFromDevice == 0;
    }
}
