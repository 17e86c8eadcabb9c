package dev.tracelab.corpus;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

import reactor.core.publisher.Mono;

/**
 * The Spring WebFlux corpus application (record/spring-webflux.sh). The same
 * jar runs twice: webflux-backend serves GET /slow, webflux-frontend serves
 * GET /blocking and GET /reactive, which both call the backend's /slow once.
 * Both run on Reactor Netty's own event loops (reactor-http-nio-N).
 */
@SpringBootApplication
@RestController
public class WebfluxCorpusApplication {

  private final String backendUrl;
  // A plain RestTemplate: SimpleClientHttpRequestFactory (HttpURLConnection),
  // blocking, keep-alive through the JDK's connection cache.
  private final RestTemplate restTemplate = new RestTemplate();
  private final WebClient webClient;

  public WebfluxCorpusApplication(@Value("${backend.url}") String backendUrl) {
    this.backendUrl = backendUrl;
    this.webClient = WebClient.create(backendUrl);
  }

  public static void main(String[] args) {
    SpringApplication.run(WebfluxCorpusApplication.class, args);
  }

  /** The downstream: answers after 60 ms from a Reactor timer; holds no thread. */
  @GetMapping("/slow")
  public Mono<String> slow(@RequestParam(name = "from", defaultValue = "") String from) {
    return Mono.delay(Duration.ofMillis(60)).thenReturn("slow " + from + "\n");
  }

  /**
   * The pathology: a synchronous handler method. WebFlux invokes it on the
   * Reactor Netty event loop that read the request (no subscribeOn, no
   * blocking-execution configuration), and RestTemplate holds that loop
   * until the backend answers.
   */
  @GetMapping("/blocking")
  public String blocking() {
    return restTemplate.getForObject(backendUrl + "/slow?from=blocking", String.class);
  }

  /** The clean counterpart: the same call with WebClient; the loop is free while it is in flight. */
  @GetMapping("/reactive")
  public Mono<String> reactive() {
    return webClient.get().uri("/slow?from=reactive").retrieve().bodyToMono(String.class);
  }
}
