# The image of a Quarkus service (make images passes SERVICE and PORT from
# services/<service>/service.yaml; the build context is services/). Quarkus
# traces itself with its OpenTelemetry extension, so there is no Java agent.
# Multi-stage: Maven builds the fast-jar layout; the runtime stage is a JRE,
# run as a non-root user. Base images are pinned by tag (k8s/README.md, "Images").
#
# The bases are build arguments, so that a machine without Docker Hub can pass
# its own (make images JAVA_BUILD_IMAGE=... JAVA_RUNTIME_IMAGE=...): BUILD_IMAGE
# needs mvn and a JDK >= 21, RUNTIME_IMAGE java on the PATH. No syntax line and
# no cache mount: the classic builder (Docker without BuildKit) must build it
# too, and it knows neither.
ARG BUILD_IMAGE=maven:3.9.11-eclipse-temurin-21
ARG RUNTIME_IMAGE=eclipse-temurin:21.0.8_9-jre

# This stage, up to ARG SERVICE, is spring.Dockerfile's, line for line: it
# builds every module at once, so the layer cache (classic or BuildKit) holds
# one Maven build for all the services' images, where the cache mount used to
# keep one download of the dependencies.
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
RUN mvn -B -q package -DskipTests
ARG SERVICE
RUN test -n "$SERVICE" || { echo "quarkus.Dockerfile: pass --build-arg SERVICE=<service>" >&2; exit 1; } \
 && test -d "$SERVICE/target/quarkus-app" || { echo "quarkus.Dockerfile: $SERVICE is not a Quarkus module of services/ (the build made no $SERVICE/target/quarkus-app)" >&2; exit 1; } \
 && cp -r "$SERVICE/target/quarkus-app" /quarkus-app

FROM ${RUNTIME_IMAGE}
ARG PORT
COPY --from=build /quarkus-app/ /app/
USER 10001:10001
EXPOSE ${PORT}
ENTRYPOINT ["java", "-jar", "/app/quarkus-run.jar"]
