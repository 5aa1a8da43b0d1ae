package org.mechspec.spec;

import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a mutant test: it builds a deliberately broken mechanism (in src/test, through a seam or a decorator) and
 * asserts that this declared check reports false on it. The meta-test fails for a declared check that no such test
 * breaks, and for one that names an undeclared check.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Repeatable(Breaks.All.class)
public @interface Breaks {
    /** The paper whose check the mutant breaks. */
    String paper();

    /** The check that must report false on the mutant. */
    String check();

    /**
     * What the broken mechanism does, as "what each check is known to reject" prints it (summary.md, Allure), e.g.
     * "keys folded with the sign of beta flipped". Empty: the test method's name in words.
     */
    String description() default "";

    /** Several checks broken by one mutant. */
    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @interface All {
        /** The checks, one {@link Breaks} each. */
        Breaks[] value();
    }
}
