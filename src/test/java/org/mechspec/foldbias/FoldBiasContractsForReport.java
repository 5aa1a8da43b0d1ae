package org.mechspec.foldbias;

/** Hands the report test (report/, another package) fold-bias's contract class, which stays package-private. */
public final class FoldBiasContractsForReport {
    private FoldBiasContractsForReport() {
    }

    public static Class<?> fixture() {
        return FoldBiasContracts.class;
    }
}
