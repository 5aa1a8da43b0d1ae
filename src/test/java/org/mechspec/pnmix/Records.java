package org.mechspec.pnmix;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;

/** A copy of a record with one component replaced: the broken intermediates of the mutant tests. */
final class Records {
    private Records() {
    }

    @SuppressWarnings("unchecked")
    static <R extends Record> R with(R record, String component, Object value) {
        try {
            RecordComponent[] parts = record.getClass().getRecordComponents();
            Object[] args = new Object[parts.length];
            Class<?>[] types = new Class<?>[parts.length];
            boolean found = false;
            for (int i = 0; i < parts.length; i++) {
                types[i] = parts[i].getType();
                found |= parts[i].getName().equals(component);
                args[i] = parts[i].getName().equals(component) ? value : parts[i].getAccessor().invoke(record);
            }
            if (!found) {
                throw new IllegalArgumentException(record.getClass().getSimpleName() + " has no component " + component);
            }
            Constructor<?> canonical = record.getClass().getDeclaredConstructor(types);
            return (R) canonical.newInstance(args);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
