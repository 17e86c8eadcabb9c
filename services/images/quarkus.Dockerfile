# syntax=docker/dockerfile:1
# The image of a Quarkus service (make images passes SERVICE and PORT from
# services/<service>/service.yaml; the build context is services/). Quarkus
# traces itself with its OpenTelemetry extension, so there is no Java agent.
# Multi-stage: Maven builds the fast-jar layout; the runtime stage is a JRE,
# run as a non-root user. Base images are pinned by tag (k8s/README.md, "Images").
FROM maven:3.9.11-eclipse-temurin-21 AS build
ARG SERVICE
RUN test -n "$SERVICE" || { echo "quarkus.Dockerfile: pass --build-arg SERVICE=<service>" >&2; exit 1; }
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.m2 \
    mvn -B -q -pl "$SERVICE" -am package -DskipTests \
 && cp -r "$SERVICE/target/quarkus-app" /quarkus-app

FROM eclipse-temurin:21.0.8_9-jre
ARG PORT
COPY --from=build /quarkus-app/ /app/
USER 10001:10001
EXPOSE ${PORT}
ENTRYPOINT ["java", "-jar", "/app/quarkus-run.jar"]
