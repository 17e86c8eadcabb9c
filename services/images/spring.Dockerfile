# syntax=docker/dockerfile:1
# The image of a Spring Boot service (make images passes SERVICE and PORT from
# services/<service>/service.yaml; the build context is services/, the Maven
# multi-module). Multi-stage: Maven builds the service's fat jar and fetches
# the pinned OpenTelemetry Java agent; the runtime stage is a JRE, run as a
# non-root user. The agent is attached by JAVA_TOOL_OPTIONS in the service's
# generated Deployment. Base images are pinned by tag (k8s/README.md, "Images").
ARG OTEL_JAVAAGENT_VERSION=2.33.1

FROM maven:3.9.11-eclipse-temurin-21 AS build
ARG SERVICE
ARG OTEL_JAVAAGENT_VERSION
RUN test -n "$SERVICE" || { echo "spring.Dockerfile: pass --build-arg SERVICE=<service>" >&2; exit 1; }
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.m2 \
    mvn -B -q -pl "$SERVICE" -am package -DskipTests \
 && cp "$SERVICE/target/$SERVICE.jar" /app.jar \
 && mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact=io.opentelemetry.javaagent:opentelemetry-javaagent:${OTEL_JAVAAGENT_VERSION} \
      -DoutputDirectory=/agent -Dmdep.stripVersion=true

FROM eclipse-temurin:21.0.8_9-jre
ARG PORT
COPY --from=build /app.jar /app/app.jar
COPY --from=build /agent/opentelemetry-javaagent.jar /opt/otel/opentelemetry-javaagent.jar
USER 10001:10001
EXPOSE ${PORT}
ENTRYPOINT ["java", "-jar", "/app/app.jar"]
