package dev.tracelab.gateway;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertyResolver;

import dev.tracelab.settings.Settings;
import dev.tracelab.settings.spring.SpringSettings;

/**
 * How Spring MVC matches a request path against the route table: the pathology of
 * case study 004 and its fix, chosen at startup by GATEWAY_PATH_MATCHING.
 *
 * <p>Either way, Spring MVC looks a literal path up in a map, but tries every
 * mapping with a path variable or a wildcard one by one. What one try costs is
 * the difference:
 * <ul>
 * <li>{@code ant} (the pathology, Spring MVC's default before 5.3): AntPathMatcher
 * works on strings. For each candidate pattern it splits the request path into
 * new segment strings again, then checks the segments one by one, through a
 * regular expression for every segment holding a variable. On a table of
 * regex-constrained routes that is most of a request's CPU, as the case's
 * profiles showed (the filter chain at ~40% of the profile).</li>
 * <li>{@code path-pattern} (the fix): every pattern was parsed once at startup
 * into a chain of elements, and the request path is parsed once per request;
 * a try walks the chain and stops at the first element that differs, without
 * allocating. Spring measured 6-8x the throughput of AntPathMatcher. In the
 * case, switching halved the latency.</li>
 * </ul>
 * Both produce the same answers for this table; the tests check every route.
 */
public class PathMatching implements EnvironmentPostProcessor {

    public static final String SETTING = "GATEWAY_PATH_MATCHING";
    static final String SPRING_PROPERTY = "spring.mvc.pathmatch.matching-strategy";

    public enum Strategy {
        ANT("ant_path_matcher"),
        PATH_PATTERN("path_pattern_parser");

        private final String springValue;

        Strategy(String springValue) {
            this.springValue = springValue;
        }

        /** How GATEWAY_PATH_MATCHING spells it. */
        public String setting() {
            return Settings.label(this);
        }

        public static Strategy from(PropertyResolver env) {
            return SpringSettings.of(env).oneOf(SETTING, Strategy.class);
        }
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Strategy strategy = Strategy.from(environment);
        // First, so the lab's setting wins over any spring.mvc.* found elsewhere.
        environment.getPropertySources().addFirst(new MapPropertySource("gatewayPathMatching",
                Map.of(SPRING_PROPERTY, strategy.springValue)));
    }
}
