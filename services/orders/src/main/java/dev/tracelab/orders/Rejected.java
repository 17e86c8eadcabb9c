package dev.tracelab.orders;

/** A request the service refuses, with the status and the one-line reason the client gets. */
public class Rejected extends RuntimeException {

    private final int status;

    public Rejected(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    static Rejected badRequest(String message) {
        return new Rejected(400, message);
    }

    static Rejected unprocessable(String message) {
        return new Rejected(422, message);
    }
}
