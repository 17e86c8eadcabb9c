package dev.tracelab.gateway;

import java.util.concurrent.ForkJoinPool;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertyResolver;

import dev.tracelab.settings.spring.SpringSettings;

/**
 * The size of the JVM's ForkJoinPool common pool, from
 * GATEWAY_COMMON_POOL_PARALLELISM: the other dead end of case study 004.
 *
 * <p>In the case the REST API handled the broker's responses asynchronously in
 * the common pool, which the JVM sizes at one thread less than the CPUs: one
 * thread on a 2-CPU pod. Suspecting contention there, the team raised it with
 * {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism=8}; the profile
 * showed more threads and the latency did not move. Path matching runs on the
 * request's own thread (Tomcat's pool, not the common pool), so a larger
 * common pool cannot make it cheaper; on a CPU-bound gateway more runnable
 * threads can only compete for the same CPU.
 *
 * <p>The JVM reads that property once, when ForkJoinPool is initialized, so it
 * is set here, before Spring creates the context, and then checked: if
 * something started the common pool earlier (a Java agent, a test in the same
 * JVM), the setting would silently do nothing, and the variant would measure
 * the default pool while claiming a larger one.
 */
public class CommonPoolParallelism implements EnvironmentPostProcessor {

    public static final String SETTING = "GATEWAY_COMMON_POOL_PARALLELISM";
    static final String JVM_PROPERTY = "java.util.concurrent.ForkJoinPool.common.parallelism";
    /** Leaves the pool as the JVM sizes it (CPUs - 1, at least 1). */
    static final int JVM_DEFAULT = 0;

    static int from(PropertyResolver env) {
        return SpringSettings.of(env).wholeNumber(SETTING);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        apply(from(environment));
    }

    static void apply(int parallelism) {
        if (parallelism == JVM_DEFAULT) {
            return;
        }
        System.setProperty(JVM_PROPERTY, Integer.toString(parallelism));
        int actual = ForkJoinPool.getCommonPoolParallelism();
        if (actual != parallelism) {
            throw new IllegalStateException("%s=%d came too late: the common pool had already started with parallelism %d"
                    .formatted(SETTING, parallelism, actual));
        }
    }
}
