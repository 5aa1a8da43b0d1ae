package org.mechspec.compute;

/**
 * How a 1-bit group chooses its two levels. Groups of 2 bits or more always use min/max levels.
 * Dequantization is {@code zero + code·scale} either way, so the choice only affects quantization.
 */
public enum OneBitLevels {
    /**
     * zero = mean of the values below the group mean, scale = (mean of the values at or above it) − zero,
     * code = x ≥ group mean. Each level is the centroid of the values it stands for.
     */
    CONDITIONAL_MEANS,
    /** zero = min, scale = max − min, code = round((x − min)/scale): both levels sit on the extremes. */
    MIN_MAX
}
