package org.mechspec.spec;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Copies of records with one component replaced: how a test builds a broken intermediate for a check. */
public final class Records {
    private Records() {
    }

    /**
     * {@code record} with its component {@code name} set to {@code value}, every other component shared. When the
     * record has no such component, the one nested record component that has it is replaced by its copy.
     */
    public static <R extends Record> R with(R record, String name, Object value) {
        RecordComponent[] components = record.getClass().getRecordComponents();
        Object[] args = values(record, components);
        for (int i = 0; i < components.length; i++) {
            if (components[i].getName().equals(name)) {
                args[i] = value;
                return construct(record, components, args);
            }
        }
        List<Integer> holders = new ArrayList<>();
        for (int i = 0; i < components.length; i++) {
            if (args[i] instanceof Record nested && has(nested, name)) {
                holders.add(i);
            }
        }
        if (holders.size() != 1) {
            throw new IllegalArgumentException(record.getClass().getSimpleName() + " has " + (holders.isEmpty() ? "no"
                    : "more than one nested") + " component " + name);
        }
        int i = holders.get(0);
        args[i] = with((Record) args[i], name, value);
        return construct(record, components, args);
    }

    private static boolean has(Record r, String name) {
        return Arrays.stream(r.getClass().getRecordComponents()).anyMatch(c -> c.getName().equals(name));
    }

    private static Object[] values(Record record, RecordComponent[] components) {
        Object[] args = new Object[components.length];
        try {
            for (int i = 0; i < components.length; i++) {
                components[i].getAccessor().setAccessible(true);
                args[i] = components[i].getAccessor().invoke(record);
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return args;
    }

    @SuppressWarnings("unchecked")
    private static <R extends Record> R construct(R record, RecordComponent[] components, Object[] args) {
        try {
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
