package org.mechspec.spec;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test method as one half (property or seeded) of a paper's declared check.
 * The check must be declared in {@code contracts/<paper>.json}; the meta-test enforces both directions.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Tag("contract")
@ExtendWith({ContractExtension.class, MissingDataSkips.class})
public @interface Contract {
    /** The paper's key, as in contracts/KEY.json. */
    String paper();

    /** The declared check this test is a half of. */
    String check();
}
