package org.mechspec.compute;

import java.util.regex.Pattern;

/**
 * Whether the bench's device is a MIG slice: a partition of a GPU with its own share of the SMs, the L2 and the
 * memory bandwidth. The driver API has no attribute for it (JCuda 12.0 exposes none), but the driver names a slice
 * after its profile ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") and a slice is selected by a {@code MIG-} UUID in
 * CUDA_VISIBLE_DEVICES. On a slice the peak from memory clock × bus width is the whole GPU's, not the slice's.
 *
 * @param state "yes", "no" or "unknown"
 * @param evidence what the state was read from
 */
public record MigState(String state, String evidence) {
    private static final Pattern MIG_PROFILE = Pattern.compile("\\bMIG\\b");

    /** The state of the device named {@code deviceName}, selected by {@code visibleDevices} (may be null). */
    public static MigState of(String deviceName, String visibleDevices, boolean emulated) {
        if (emulated) {
            return new MigState("unknown", "the emulated driver models no MIG partitioning");
        }
        if (deviceName == null || deviceName.isBlank()) {
            return new MigState("unknown", "the driver reported no device name");
        }
        if (MIG_PROFILE.matcher(deviceName).find()) {
            return new MigState("yes", "the device name '" + deviceName + "' names a MIG profile");
        }
        if (visibleDevices != null && visibleDevices.contains("MIG-")) {
            return new MigState("yes", "CUDA_VISIBLE_DEVICES selects a MIG- UUID: " + visibleDevices);
        }
        return new MigState("no", "the device name '" + deviceName + "' names no MIG profile (a slice is named '<GPU> MIG <profile>')"
                + " and CUDA_VISIBLE_DEVICES selects no MIG- UUID");
    }

    /** Why a fraction of the clock × bus-width peak is not reported, or null when it is. */
    public String peakWithheld() {
        return switch (state) {
            case "no" -> null;
            case "yes" -> "MIG slice: memory clock x bus width is the whole GPU's peak; a slice gets a share of it that the"
                    + " driver does not report, so a fraction of that peak would understate the slice";
            default -> "cannot tell whether the device is a MIG slice (" + evidence + "); memory clock x bus width would be the"
                    + " whole GPU's peak on a slice";
        };
    }
}
