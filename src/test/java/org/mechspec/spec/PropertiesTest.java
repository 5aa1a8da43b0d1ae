package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The replay command names the project when the papers live in one of their own, so the printed line runs as is. */
@Tag("platform")
class PropertiesTest {
    @Test
    void theReplayCommandNamesTheProjectOnlyForAPaperOfItsOwn() {
        String before = System.getProperty("mechspec.project.dir");
        try {
            System.clearProperty("mechspec.project.dir");
            assertThat(Properties.replayHint(7)).isEqualTo("replay with mechspec run --property-seed 7, or mvn -Dmechspec.propertySeed=7");
            System.setProperty("mechspec.project.dir", "/labs/own-paper");
            assertThat(Properties.replayHint(7))
                    .isEqualTo("replay with mechspec run --project /labs/own-paper --property-seed 7, or mvn -Dmechspec.propertySeed=7");
        } finally {
            if (before == null) {
                System.clearProperty("mechspec.project.dir");
            } else {
                System.setProperty("mechspec.project.dir", before);
            }
        }
    }
}
