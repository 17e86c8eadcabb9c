package manifests

// The keys Tempo accepts in its configuration file, written down from
// Tempo's source at the release of the image the lab pins (grafana/tempo in
// k8s/base/kustomization.yaml; a test fails when the two differ). Tempo is
// AGPL-3.0, so the lab reads its structs and does not link them: each struct
// names the file (at tag v2.8.2 of github.com/grafana/tempo unless another
// module is named) whose `yaml:` tags it copies. Tempo decodes the file with
// yaml.v2's UnmarshalStrict (cmd/tempo/main.go, loadConfig), so an unknown key
// anywhere in a struct is an error; fields tagged `yaml:"-"` are not keys.
//
// A struct is listed only where the lab's configuration sets a key inside it;
// a struct it leaves alone is a "section": a mapping whose keys are not
// checked (k8s/README.md, "The telemetry configurations", says what that
// leaves unchecked).
//
// A key's spec is one of: string, bool, int, uint, float, duration (Go's
// time.Duration), model-duration (Prometheus's, which also takes d, w, y),
// []string, map[string]string, section, the name of a struct below, or [] and
// that name for a list of them. "string: a|b" allows only those values.
const tempoVersion = "2.8.2"

type tempoStruct struct {
	source string
	keys   map[string]string
}

var tempoStructs = map[string]tempoStruct{
	"config": {"cmd/tempo/app/config.go, Config", map[string]string{
		"target":                    "string",
		"auth_enabled":              "bool",
		"multitenancy_enabled":      "bool",
		"shutdown_delay":            "duration",
		"stream_over_http_enabled":  "bool",
		"http_api_prefix":           "string",
		"enable_go_runtime_metrics": "bool",
		"server":                    "server",
		"internal_server":           "section",
		"distributor":               "distributor",
		"ingester_client":           "section",
		"metrics_generator_client":  "section",
		"querier":                   "section",
		"query_frontend":            "section",
		"compactor":                 "compactor",
		"ingester":                  "ingester",
		"metrics_generator":         "generator",
		"ingest":                    "section",
		"block_builder":             "section",
		"storage":                   "storage",
		"overrides":                 "overrides",
		"memberlist":                "section",
		"usage_report":              "section",
		"cache":                     "section",
		"backend_scheduler":         "section",
		"backend_scheduler_client":  "section",
		"backend_worker":            "section",
	}},
	// Tempo 2.8.2 requires github.com/grafana/dskit v0.0.0-20250317084829-9cdd36a91f10.
	"server": {"dskit@9cdd36a91f10 server/server.go, Config; log_level's values: log/level.go, Level.Set", map[string]string{
		"http_listen_network":      "string",
		"http_listen_address":      "string",
		"http_listen_port":         "int",
		"http_listen_conn_limit":   "int",
		"grpc_listen_network":      "string",
		"grpc_listen_address":      "string",
		"grpc_listen_port":         "int",
		"grpc_listen_conn_limit":   "int",
		"proxy_protocol_enabled":   "bool",
		"tls_cipher_suites":        "string",
		"tls_min_version":          "string",
		"http_tls_config":          "section",
		"grpc_tls_config":          "section",
		"register_instrumentation": "bool",
		"report_grpc_codes_in_instrumentation_label_enabled":   "bool",
		"graceful_shutdown_timeout":                            "duration",
		"http_server_read_timeout":                             "duration",
		"http_server_read_header_timeout":                      "duration",
		"http_server_write_timeout":                            "duration",
		"http_server_idle_timeout":                             "duration",
		"http_log_closed_connections_without_response_enabled": "bool",
		"grpc_server_max_recv_msg_size":                        "int",
		"grpc_server_max_send_msg_size":                        "int",
		"grpc_server_max_concurrent_streams":                   "uint",
		"grpc_server_max_connection_idle":                      "duration",
		"grpc_server_max_connection_age":                       "duration",
		"grpc_server_max_connection_age_grace":                 "duration",
		"grpc_server_keepalive_time":                           "duration",
		"grpc_server_keepalive_timeout":                        "duration",
		"grpc_server_min_time_between_pings":                   "duration",
		"grpc_server_ping_without_stream_allowed":              "bool",
		"grpc_server_num_workers":                              "int",
		"grpc_server_stats_tracking_enabled":                   "bool",
		"grpc_server_recv_buffer_pools_enabled":                "bool",
		"log_format":                                           "string",
		"log_level":                                            "string: debug|info|warn|error",
		"log_source_ips_enabled":                               "bool",
		"log_source_ips_full":                                  "bool",
		"log_source_ips_header":                                "string",
		"log_source_ips_regex":                                 "string",
		"log_request_headers":                                  "bool",
		"log_request_at_info_level_enabled":                    "bool",
		"log_request_exclude_headers_list":                     "string",
		"http_path_prefix":                                     "string",
		"cluster_validation":                                   "section",
	}},
	"distributor": {"modules/distributor/config.go, Config", map[string]string{
		"ring":                              "section",
		"receivers":                         "receivers",
		"override_ring_key":                 "string",
		"log_received_spans":                "section",
		"log_discarded_spans":               "section",
		"metric_received_spans":             "section",
		"forwarders":                        "[]section",
		"usage":                             "section",
		"kafka_write_path_enabled":          "bool",
		"kafka_config":                      "section",
		"extend_writes":                     "bool",
		"retry_after_on_resource_exhausted": "duration",
		"max_attribute_bytes":               "int",
		"artificial_delay":                  "duration",
	}},
	// A map in Tempo's struct, decoded at start-up by the receivers' own
	// factories, not by -config.verify: its names are the factories Tempo
	// registers.
	"receivers": {"modules/distributor/receiver/shim.go, the factories of New", map[string]string{
		"otlp":       "otlp",
		"jaeger":     "section",
		"zipkin":     "section",
		"opencensus": "section",
		"kafka":      "section",
	}},
	// Tempo 2.8.2 requires go.opentelemetry.io/collector/receiver/otlpreceiver v0.124.0.
	"otlp": {"otlpreceiver@v0.124.0 config.go, Config", map[string]string{
		"protocols": "otlp-protocols",
	}},
	"otlp-protocols": {"otlpreceiver@v0.124.0 config.go, Protocols", map[string]string{
		"grpc": "section",
		"http": "section",
	}},
	"ingester": {"modules/ingester/config.go, Config", map[string]string{
		"lifecycler":             "section",
		"partition_ring":         "section",
		"concurrent_flushes":     "int",
		"flush_check_period":     "duration",
		"flush_op_timeout":       "duration",
		"trace_idle_period":      "duration",
		"max_block_duration":     "duration",
		"max_block_bytes":        "uint",
		"complete_block_timeout": "duration",
		"override_ring_key":      "string",
		"flush_all_on_shutdown":  "bool",
		"flush_object_storage":   "bool",
	}},
	"compactor": {"modules/compactor/config.go, Config", map[string]string{
		"disabled":          "bool",
		"ring":              "section",
		"compaction":        "compaction",
		"override_ring_key": "string",
	}},
	"compaction": {"tempodb/config.go, CompactorConfig", map[string]string{
		"v2_in_buffer_bytes":        "uint",
		"v2_out_buffer_bytes":       "uint",
		"v2_prefetch_traces_count":  "int",
		"compaction_window":         "duration",
		"max_compaction_objects":    "int",
		"max_block_bytes":           "uint",
		"block_retention":           "duration",
		"compacted_block_retention": "duration",
		"retention_concurrency":     "uint",
		"max_time_per_tenant":       "duration",
		"compaction_cycle":          "duration",
	}},
	"generator": {"modules/generator/config.go, Config", map[string]string{
		"ring":                               "section",
		"processor":                          "section",
		"registry":                           "registry",
		"storage":                            "generator-storage",
		"traces_storage":                     "wal",
		"traces_query_storage":               "wal",
		"metrics_ingestion_time_range_slack": "duration",
		"query_timeout":                      "duration",
		"override_ring_key":                  "string",
		"codec":                              "string",
		"disable_local_blocks":               "bool",
		"disable_grpc":                       "bool",
		"ingest_concurrency":                 "uint",
		"instance_id":                        "string",
	}},
	"registry": {"modules/generator/registry/config.go, Config", map[string]string{
		"collection_interval":    "duration",
		"stale_duration":         "duration",
		"external_labels":        "map[string]string",
		"inject_tenant_id_as":    "string",
		"max_label_name_length":  "int",
		"max_label_value_length": "int",
	}},
	"generator-storage": {"modules/generator/storage/config.go, Config", map[string]string{
		"path":                           "string",
		"wal":                            "section",
		"remote_write_flush_deadline":    "duration",
		"remote_write_add_org_id_header": "bool",
		"remote_write":                   "[]remote-write",
	}},
	// Tempo 2.8.2 requires github.com/prometheus/prometheus v0.303.1 (3.3.1)
	// and github.com/prometheus/common v0.63.0, whose HTTPClientConfig (and its
	// ProxyConfig) are inlined here.
	"remote-write": {"prometheus@v3.3.1 config/config.go, RemoteWriteConfig; common@v0.63.0 config/http_config.go, HTTPClientConfig and ProxyConfig", map[string]string{
		"url":                    "string",
		"remote_timeout":         "model-duration",
		"headers":                "map[string]string",
		"write_relabel_configs":  "[]section",
		"name":                   "string",
		"send_exemplars":         "bool",
		"send_native_histograms": "bool",
		"round_robin_dns":        "bool",
		"protobuf_message":       "string",
		"queue_config":           "section",
		"metadata_config":        "section",
		"sigv4":                  "section",
		"azuread":                "section",
		"google_iam":             "section",
		"basic_auth":             "section",
		"authorization":          "section",
		"oauth2":                 "section",
		"bearer_token":           "string",
		"bearer_token_file":      "string",
		"tls_config":             "section",
		"follow_redirects":       "bool",
		"enable_http2":           "bool",
		"http_headers":           "section",
		"proxy_url":              "string",
		"no_proxy":               "string",
		"proxy_from_environment": "bool",
		"proxy_connect_header":   "section",
	}},
	"wal": {"tempodb/wal/wal.go, Config", map[string]string{
		"path":                       "string",
		"v2_encoding":                "string",
		"search_encoding":            "string",
		"ingestion_time_range_slack": "duration",
		"version":                    "string",
	}},
	"storage": {"modules/storage/config.go, Config", map[string]string{
		"trace": "trace-storage",
	}},
	// backend's values: tempodb/backend/backend.go, the backend names.
	"trace-storage": {"tempodb/config.go, Config, with BloomConfig of tempodb/backend/cache/cache.go inlined", map[string]string{
		"pool":                                 "section",
		"wal":                                  "wal",
		"block":                                "section",
		"search":                               "section",
		"blocklist_poll":                       "duration",
		"blocklist_poll_concurrency":           "uint",
		"blocklist_poll_tenant_concurrency":    "uint",
		"blocklist_poll_fallback":              "bool",
		"blocklist_poll_tenant_index_builders": "int",
		"blocklist_poll_stale_tenant_index":    "duration",
		"blocklist_poll_jitter_ms":             "int",
		"blocklist_poll_tolerate_consecutive_errors": "int",
		"blocklist_poll_tolerate_tenant_failures":    "int",
		"empty_tenant_deletion_enabled":              "bool",
		"empty_tenant_deletion_age":                  "duration",
		"backend":                                    "string: local|gcs|s3|azure",
		"local":                                      "local-storage",
		"gcs":                                        "section",
		"s3":                                         "section",
		"azure":                                      "section",
		"cache":                                      "string",
		"background_cache":                           "section",
		"memcached":                                  "section",
		"redis":                                      "section",
		"cache_min_compaction_level":                 "uint",
		"cache_max_block_age":                        "duration",
	}},
	"local-storage": {"tempodb/backend/local/config.go, Config", map[string]string{
		"path": "string",
	}},
	// Only the current format: Config.UnmarshalYAML also takes the legacy flat
	// one, but then CheckConfig warns (warnLegacyOverridesConfig) and
	// -config.verify fails, so the legacy keys fail here too.
	"overrides": {"modules/overrides/config.go, Config", map[string]string{
		"defaults":                    "overrides-defaults",
		"per_tenant_override_config":  "string",
		"per_tenant_override_period":  "model-duration",
		"user_configurable_overrides": "section",
	}},
	"overrides-defaults": {"modules/overrides/config.go, Overrides", map[string]string{
		"ingestion":         "section",
		"read":              "section",
		"compaction":        "section",
		"metrics_generator": "generator-overrides",
		"forwarders":        "[]string",
		"global":            "section",
		"storage":           "section",
		"cost_attribution":  "section",
	}},
	// processors' values: modules/generator/instance.go, SupportedProcessors
	// (the generator refuses any other name when it starts).
	"generator-overrides": {"modules/overrides/config.go, MetricsGeneratorOverrides", map[string]string{
		"ring_size":                  "int",
		"processors":                 "[]string: service-graphs|span-metrics|local-blocks|span-metrics-count|span-metrics-latency|span-metrics-size|host-info",
		"max_active_series":          "uint",
		"collection_interval":        "duration",
		"disable_collection":         "bool",
		"generate_native_histograms": "string",
		"trace_id_label_name":        "string",
		"remote_write_headers":       "section",
		"forwarder":                  "section",
		"processor":                  "section",
		"ingestion_time_range_slack": "duration",
	}},
}
