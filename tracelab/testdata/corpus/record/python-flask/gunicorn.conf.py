# gunicorn settings of the store (sync workers; the bind address and the
# number of workers are given on the command line). The master never loads
# the application or the SDK: each worker sets up OpenTelemetry after the
# fork, then imports app.py, and flushes its spans when it exits.
worker_class = "sync"
preload_app = False
# gunicorn >= 24 opens a control socket under ~/.gunicorn by default: not here.
control_socket_disable = True


def post_fork(server, worker):
    import tracing
    tracing.init()


def worker_exit(server, worker):
    import tracing
    tracing.shutdown()
