# The image of a Spring Boot service (make images passes SERVICE and PORT from
# services/<service>/service.yaml; the build context is services/, the Maven
# multi-module). Multi-stage: Maven builds the service's fat jar and fetches
# the pinned OpenTelemetry Java agent; the runtime stage is a JRE, run as a
# non-root user. The agent is attached by JAVA_TOOL_OPTIONS in the service's
# generated Deployment. Base images are pinned by tag (k8s/README.md, "Images").
#
# The bases are build arguments, so that a machine without Docker Hub can pass
# its own (make images JAVA_BUILD_IMAGE=... JAVA_RUNTIME_IMAGE=...): BUILD_IMAGE
# needs mvn and a JDK >= 21, RUNTIME_IMAGE java on the PATH. No syntax line and
# no cache mount: the classic builder (Docker without BuildKit) must build it
# too, and it knows neither.
ARG BUILD_IMAGE=maven:3.9.11-eclipse-temurin-21
ARG RUNTIME_IMAGE=eclipse-temurin:21.0.8_9-jre
ARG OTEL_JAVAAGENT_VERSION=2.33.1

# This stage, up to ARG SERVICE, is quarkus.Dockerfile's, line for line: it
# builds every module at once, so the layer cache (classic or BuildKit) holds
# one Maven build for all the services' images, where the cache mount used to
# keep one download of the dependencies.
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
RUN mvn -B -q package -DskipTests
ARG OTEL_JAVAAGENT_VERSION
RUN mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact=io.opentelemetry.javaagent:opentelemetry-javaagent:${OTEL_JAVAAGENT_VERSION} \
      -DoutputDirectory=/agent -Dmdep.stripVersion=true
ARG SERVICE
RUN test -n "$SERVICE" || { echo "spring.Dockerfile: pass --build-arg SERVICE=<service>" >&2; exit 1; } \
 && test -f "$SERVICE/target/$SERVICE.jar" || { echo "spring.Dockerfile: $SERVICE is not a Spring Boot module of services/ (the build made no $SERVICE/target/$SERVICE.jar)" >&2; exit 1; } \
 && cp "$SERVICE/target/$SERVICE.jar" /app.jar

FROM ${RUNTIME_IMAGE}
ARG PORT
COPY --from=build /app.jar /app/app.jar
COPY --from=build /agent/opentelemetry-javaagent.jar /opt/otel/opentelemetry-javaagent.jar
USER 10001:10001
EXPOSE ${PORT}
ENTRYPOINT ["java", "-jar", "/app/app.jar"]
