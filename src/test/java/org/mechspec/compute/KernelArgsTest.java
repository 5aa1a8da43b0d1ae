package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The parameter buffer's layout: declaration order, each argument aligned to its size, no tail padding. */
@Tag("platform")
class KernelArgsTest {
    @Test
    void argumentsAreAlignedToTheirSize() {
        assertThat(new KernelArgs().ptr(null).i32(1).i32(2).f64(3).size()).isEqualTo(24);
        assertThat(new KernelArgs().i32(1).ptr(null).size()).isEqualTo(16);
        assertThat(new KernelArgs().i32(1).f32(2).i32(3).size()).isEqualTo(12);
        assertThat(new KernelArgs().f64(1).i32(2).size()).as("no tail padding").isEqualTo(12);
        assertThat(new KernelArgs().ptr(null).i32(1).f64(2).count()).isEqualTo(3);
    }

    @Test
    void onlyTheBackendsOwnAllocationsArePointers() {
        assertThatThrownBy(() -> new KernelArgs().ptr(new CUdeviceptr())).hasMessageContaining("device allocation");
    }
}
