package org.mechspec.spec;

import io.qameta.allure.Allure;
import java.lang.reflect.AnnotatedElement;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Puts every test that is not a contract half under an Allure epic, so a paper's mutant, bad-input and unit tests
 * sit beside its contracts in Behaviors (epic = the paper its class is tagged with, else the tag or "platform";
 * feature = the class). Registered for every test by JUnit's extension autodetection (junit-platform.properties).
 */
public final class AllureGrouping implements BeforeEachCallback {
    private static final Set<String> NOT_A_GROUP = Set.of("platform", "contract", "gpu", "cli", ContractCoverage.FIXTURE_TAG);

    @Override
    public void beforeEach(ExtensionContext context) {
        if (context.getRequiredTestMethod().isAnnotationPresent(Contract.class)) {
            return; // ContractExtension labels contracts: epic = paper, feature = check, story = seed
        }
        Class<?> c = context.getRequiredTestClass();
        Allure.epic(group(c));
        Allure.feature(c.getSimpleName());
    }

    static String group(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            for (Tag t : tags(k)) {
                if (!NOT_A_GROUP.contains(t.value())) {
                    return t.value();
                }
            }
        }
        return "platform";
    }

    private static List<Tag> tags(AnnotatedElement e) {
        return List.of(e.getAnnotationsByType(Tag.class));
    }
}
