package org.mechspec.spec;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import io.qameta.allure.Allure;
import org.mechspec.compute.UnavailableBackend;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Usage;
import org.mechspec.worker.WorkerBackend;
import org.opentest4j.TestAbortedException;

/**
 * Wraps every {@link Contract} invocation: labels it for Allure (epic = paper, feature = check, story = seed)
 * and, when a seeded invocation ends (passed or not), publishes its {@link SeedRun} record as a report entry
 * and attaches the metrics as JSON. The reporter turns those entries plus the outcomes into artifacts.
 */
public final class ContractExtension implements InvocationInterceptor, ParameterResolver {
    /** Report-entry key of a property half, so its outcome counts towards its check. */
    public static final String PROPERTY_KEY = "mechspec.property";
    /** Report-entry key of why a property half judged nothing of the outside implementation. */
    public static final String PROPERTY_NOT_JUDGED_KEY = "mechspec.property.not_judged";
    /**
     * How a skip for want of a verdict begins: the invocation passed, but the outside implementation computed nothing
     * of it (it serves none of the operations the check used, every call failed, or the check calls none), so it is
     * reported as skipped with this reason, never as held.
     */
    public static final String NOT_JUDGED = "not judged: ";

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                            ExtensionContext context) throws Throwable {
        SeedRun run = null;
        for (Object a : call.getArguments()) {
            if (a instanceof SeedRun s) {
                run = s;
            }
        }
        if (run == null) {
            property(invocation, call.getExecutable(), context);
            return;
        }
        label(run.manifest().paper(), run.checkName(), "seed " + run.seed());
        explain(run.manifest(), run.checkName());
        if (run.backend() instanceof UnavailableBackend unavailable) {
            throw new TestAbortedException(unavailable.reason());
        }
        if (run.backend() instanceof WorkerBackend worker) {
            worker.implementation().enterPaper(run.manifest().paper());
            Allure.parameter("implementation", worker.name() + " " + worker.implementation().handshake().version());
        }
        Allure.parameter("backend", run.backend().name());
        Allure.parameter("seed", run.seed());
        Allure.parameter("device", run.backend().device());
        org.mechspec.compute.DeviceWork before = SeedRun.workSoFar(run.backend());
        Implementation judged = run.backend() instanceof WorkerBackend w ? w.implementation() : null;
        Usage usage = new Usage();
        Usage outer = judged == null ? null : judged.track(usage);
        boolean passed = false;
        String notJudged = null;
        try {
            invocation.proceed();
            java.util.List<String> missing = Figures.unrecorded(run.manifest(), run.checkName(), run.metrics());
            if (!missing.isEmpty()) { // a declared figure is never silently absent
                throw new AssertionError(run.manifest().paper() + "/" + run.checkName() + ": declared figure " + missing.get(0)
                        + " was not recorded on seed " + run.seed() + " (" + run.backend().name() + ")");
            }
            passed = true;
        } finally {
            if (judged != null) {
                judged.track(outer);
                notJudged = passed ? usage.notJudged(run.manifest().check(run.checkName()).judges()) : null; // a failure is a verdict, whatever computed it
                run.notJudged(notJudged);
            }
            run.deviceWork(SeedRun.workSoFar(run.backend()).since(before));
            String json = run.toJson();
            context.publishReportEntry(SeedRun.ENTRY_KEY, json);
            AllureFigures.deviceWork(run);
            AllureFigures.steps(run);
            AllureFigures.negativeResult(run);
            Allure.addAttachment("metrics (table)", "text/csv", AllureFigures.table(run), ".csv");
            Allure.addAttachment("metrics", "application/json",
                    new java.io.ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), ".json");
        }
        if (notJudged != null) {
            throw new TestAbortedException(NOT_JUDGED + notJudged);
        }
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
                                    ExtensionContext context) throws Throwable {
        property(invocation, call.getExecutable(), context);
    }

    private static void property(Invocation<Void> invocation, Method method, ExtensionContext context) throws Throwable {
        Contract c = method.getAnnotation(Contract.class);
        Manifest manifest = ManifestLoader.forPaper(c.paper());
        manifest.check(c.check());
        label(c.paper(), c.check(), "property");
        explain(manifest, c.check());
        WorkerBackend worker = Implementations.forPaper(manifest);
        if (worker != null) {
            Allure.parameter("implementation", worker.name() + " " + worker.implementation().handshake().version());
        }
        context.publishReportEntry(PROPERTY_KEY, c.paper() + "/" + c.check());
        Stress.enter(c.paper(), c.check());
        Usage usage = new Usage();
        Usage outer = worker == null ? null : worker.implementation().track(usage);
        Throwable failure = null;
        try {
            invocation.proceed();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            Stress.leave(failure);
            if (worker != null) {
                worker.implementation().track(outer);
            }
        }
        String notJudged = worker == null ? null : usage.notJudged(manifest.check(c.check()).judges());
        if (notJudged != null) {
            context.publishReportEntry(PROPERTY_NOT_JUDGED_KEY, notJudged);
            throw new TestAbortedException(NOT_JUDGED + notJudged);
        }
    }

    /** A property half may take a {@link PropertyRun}: its check's manifest and threshold. */
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == PropertyRun.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Contract c = context.getRequiredTestMethod().getAnnotation(Contract.class);
        return new PropertyRun(ManifestLoader.forPaper(c.paper()), c.check());
    }

    /** What the check means, in the reviewer's pane: the manifest's text, its threshold and figures, the paper. */
    private static void explain(Manifest manifest, String check) {
        Allure.description(AllureFigures.description(manifest, check));
        if (!manifest.arxivId().isBlank()) {
            Allure.link("arXiv " + manifest.arxivId(), "https://arxiv.org/abs/" + manifest.arxivId());
        }
    }

    private static void label(String paper, String check, String story) {
        Allure.epic(paper);
        Allure.feature(check);
        Allure.story(story);
    }
}
