package org.mechspec.pnmix;

/**
 * How many device copies of a cache a timed decode rotates through, call by call, so that no timed call finds its
 * cache in L2: enough that together they hold at least twice the L2 size. Between two calls on one copy the others
 * then stream at least an L2's worth of other data through the cache, which evicts it even under a replacement
 * policy that is not strictly least-recently-used. With the L2 size unknown (the driver reports none), one copy.
 *
 * @param l2Bytes the device's L2 size (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), 0 or less when unknown
 * @param copyBytes device bytes of one copy of the cache
 */
public record WorkingSet(long l2Bytes, long copyBytes, int copies) {
    public static final int L2_MULTIPLE = 2;

    public static WorkingSet of(long l2Bytes, long copyBytes) {
        if (copyBytes <= 0) {
            throw new IllegalArgumentException("a cache copy takes device bytes, got " + copyBytes);
        }
        long target = l2Bytes > 0 ? L2_MULTIPLE * l2Bytes : 0;
        long copies = Math.max(1, (target + copyBytes - 1) / copyBytes);
        if (copies > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(copies + " copies of " + copyBytes + " bytes are too many");
        }
        return new WorkingSet(l2Bytes, copyBytes, (int) copies);
    }

    /** Device bytes of all copies together. */
    public long bytes() {
        return copies * copyBytes;
    }

    /** Whether the copies hold at least twice the L2 (false when the L2 size is unknown). */
    public boolean coversL2() {
        return l2Bytes > 0 && bytes() >= L2_MULTIPLE * l2Bytes;
    }
}
