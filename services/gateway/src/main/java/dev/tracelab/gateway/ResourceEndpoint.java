package dev.tracelab.gateway;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * The handlers behind one resource's routes in one API version (one instance each, see
 * {@link Routes}). Each does a little real work in-process, a content hash per
 * document, so a request costs more than its dispatch, but not much more: in the
 * case, the gateway's own work was small next to its request matching.
 */
@ResponseBody
public class ResourceEndpoint {

    /** Documents in one list page. */
    static final int PAGE_SIZE = 10;

    public record Doc(String resource, String tenant, int version, long id, String etag) {
    }

    public record Page(String resource, String tenant, int version, List<Doc> items) {
    }

    public record Event(Doc of, String event) {
    }

    public record FileRef(Doc of, String path) {
    }

    public record History(Doc of, List<String> changes) {
    }

    private final int version;
    private final String resource;

    public ResourceEndpoint(int version, String resource) {
        this.version = version;
        this.resource = resource;
    }

    public Page list(@PathVariable String tenant) {
        List<Doc> items = new ArrayList<>(PAGE_SIZE);
        for (long id = 1; id <= PAGE_SIZE; id++) {
            items.add(doc(tenant, id));
        }
        return new Page(resource, tenant, version, items);
    }

    @ResponseStatus(HttpStatus.CREATED)
    public Doc create(@PathVariable String tenant) {
        return doc(tenant, 1);
    }

    public Doc get(@PathVariable String tenant, @PathVariable long id) {
        return doc(tenant, id);
    }

    public Doc update(@PathVariable String tenant, @PathVariable long id) {
        return doc(tenant, id);
    }

    @ResponseStatus(HttpStatus.NO_CONTENT)
    public void delete(@PathVariable String tenant, @PathVariable long id) {
        doc(tenant, id);
    }

    public History history(@PathVariable String tenant, @PathVariable long id) {
        Doc doc = doc(tenant, id);
        return new History(doc, List.of("created", "updated " + doc.etag().substring(0, 8)));
    }

    public Event event(@PathVariable String tenant, @PathVariable long id,
            @PathVariable String event) {
        return new Event(doc(tenant, id), event);
    }

    // The file path is whatever follows /files/ in the request (empty for a
    // request ending in /files, which /** matches too). Read from the URI
    // rather than from the matcher, whose notion of "path within the pattern"
    // differs between AntPathMatcher and PathPattern.
    public FileRef file(@PathVariable String tenant, @PathVariable long id,
            HttpServletRequest request) {
        String uri = request.getRequestURI();
        int at = uri.indexOf("/files/");
        return new FileRef(doc(tenant, id), at < 0 ? "" : uri.substring(at + "/files/".length()));
    }

    private Doc doc(String tenant, long id) {
        return new Doc(resource, tenant, version, id, etag(tenant + '/' + resource + '/' + id + "@v" + version));
    }

    static String etag(String key) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 12);
        }
        catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
