package org.mechspec.spec;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;

/** Copies of records with one component replaced: how a test builds a broken intermediate for a check. */
public final class Records {
    private Records() {
    }

    /** {@code record} with its component {@code name} set to {@code value}; every other component shared. */
    @SuppressWarnings("unchecked")
    public static <R extends Record> R with(R record, String name, Object value) {
        RecordComponent[] components = record.getClass().getRecordComponents();
        Object[] args = new Object[components.length];
        boolean found = false;
        try {
            for (int i = 0; i < components.length; i++) {
                found |= components[i].getName().equals(name);
                args[i] = components[i].getName().equals(name) ? value : components[i].getAccessor().invoke(record);
            }
            if (!found) {
                throw new IllegalArgumentException(record.getClass().getSimpleName() + " has no component " + name);
            }
            Class<?>[] types = Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new);
            Constructor<?> canonical = record.getClass().getDeclaredConstructor(types);
            canonical.setAccessible(true);
            return (R) canonical.newInstance(args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
