package dev.tracelab.gateway.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.springframework.http.server.PathContainer;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import dev.tracelab.gateway.RouteTable;
import dev.tracelab.gateway.RouteTable.Route;
import dev.tracelab.gateway.TestRoutes;

/**
 * AntPathMatcher against PathPattern on the gateway's own route table, with the
 * request mix of loadtests/antpath.js (every route equally likely).
 *
 * <ul>
 * <li>{@code lookup}: what a request costs Spring MVC to find its handler, through
 * the real RequestMappingHandlerMapping with the routes registered as the service
 * registers them (parsing the request path included, as DispatcherServlet does).</li>
 * <li>{@code matchEveryPattern}: the matchers alone, each request path against
 * every templated pattern, the loop the handler mapping runs for a path that is
 * not a literal route. This is what Spring's "6-8x" was about.</li>
 * </ul>
 *
 * Not a test: surefire skips it. Run with the jmh profile (see the gateway README);
 * {@link #main} prints the PathPattern/AntPathMatcher ratio of each benchmark.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class RouteMatchingBenchmark {

    @Param({"ant", "path-pattern"})
    public String strategy;

    private static final int MIX = 1024;

    private RequestMappingHandlerMapping mapping;
    private MockHttpServletRequest[] requests;
    private String[] paths;
    private PathContainer[] parsedPaths;
    private List<String> patterns;
    private List<PathPattern> parsedPatterns;
    private final AntPathMatcher ant = new AntPathMatcher();
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        mapping = TestRoutes.handlerMapping("ant".equals(strategy));
        List<Route> routes = RouteTable.routes();
        Random random = new Random(42);
        requests = new MockHttpServletRequest[MIX];
        paths = new String[MIX];
        parsedPaths = new PathContainer[MIX];
        for (int i = 0; i < MIX; i++) {
            Route route = routes.get(random.nextInt(routes.size()));
            requests[i] = new MockHttpServletRequest(route.method().name(), route.samplePath());
            paths[i] = route.samplePath();
            parsedPaths[i] = PathContainer.parsePath(route.samplePath());
        }
        patterns = routes.stream().map(Route::pattern).filter(p -> p.contains("{") || p.contains("*")).toList();
        PathPatternParser parser = new PathPatternParser();
        parsedPatterns = patterns.stream().map(parser::parse).toList();
    }

    @Benchmark
    public HandlerExecutionChain lookup() throws Exception {
        MockHttpServletRequest request = requests[next++ & (MIX - 1)];
        request.clearAttributes();
        if (mapping.getPatternParser() != null) {
            ServletRequestPathUtils.parseAndCache(request);
        }
        return mapping.getHandler(request);
    }

    @Benchmark
    public int matchEveryPattern() {
        int i = next++ & (MIX - 1);
        int matches = 0;
        if ("ant".equals(strategy)) {
            String path = paths[i];
            for (String pattern : patterns) {
                if (ant.match(pattern, path)) {
                    matches++;
                }
            }
        }
        else {
            PathContainer path = parsedPaths[i];
            for (PathPattern pattern : parsedPatterns) {
                if (pattern.matches(path)) {
                    matches++;
                }
            }
        }
        return matches;
    }

    /** Runs the benchmarks (JMH command-line options apply) and prints the ratios. */
    public static void main(String[] args) throws Exception {
        CommandLineOptions cli = new CommandLineOptions(args);
        Collection<RunResult> results = new Runner(new OptionsBuilder()
                .parent(cli)
                .include(RouteMatchingBenchmark.class.getSimpleName())
                .build()).run();
        Map<String, Map<String, Double>> scores = new TreeMap<>();
        for (RunResult r : results) {
            String bench = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            scores.computeIfAbsent(bench, k -> new TreeMap<>())
                    .put(r.getParams().getParam("strategy"), r.getPrimaryResult().getScore());
        }
        List<String> lines = new ArrayList<>();
        scores.forEach((bench, s) -> lines.add("%-18s ant %,12.0f ops/s   path-pattern %,12.0f ops/s   ratio %.2fx"
                .formatted(bench, s.get("ant"), s.get("path-pattern"), s.get("path-pattern") / s.get("ant"))));
        System.out.println();
        System.out.println("PathPattern / AntPathMatcher on the gateway's route table (" + RouteTable.routes().size() + " routes):");
        lines.forEach(System.out::println);
    }
}
