extension ImgproxyEnvironment {
    /// Every open-source `IMGPROXY_*` name `webimage serve` does not honour, and why: reported at
    /// start-up when set, and a row of `Docs/imgproxy-config.md` each.
    static let notHonoured: [String: String] = {
        var reasons: [String: String] = [
            "IMGPROXY_NETWORK": "only TCP is served",
            "IMGPROXY_READ_REQUEST_TIMEOUT": "libmicrohttpd has one idle time-out for a connection: IMGPROXY_KEEP_ALIVE_TIMEOUT",
            "IMGPROXY_WRITE_RESPONSE_TIMEOUT": "libmicrohttpd has one idle time-out for a connection: IMGPROXY_KEEP_ALIVE_TIMEOUT",
            "IMGPROXY_CACHE_CONTROL_PASSTHROUGH": "not yet: Cache-Control is IMGPROXY_TTL's",
            "IMGPROXY_USE_ETAG": "ETags are always sent and If-None-Match answered 304 (imgproxy's default is off)",
            "IMGPROXY_ETAG_BUSTER": "not yet: change the key or the URL to bust ETags",
            "IMGPROXY_USE_LAST_MODIFIED": "not yet: no Last-Modified is sent (ETags are)",
            "IMGPROXY_LAST_MODIFIED_BUSTER": "not yet: no Last-Modified is sent",
            "IMGPROXY_ENABLE_DEBUG_HEADERS": "not yet",
            "IMGPROXY_SET_CANONICAL_HEADER": "not yet",
            "IMGPROXY_DEVELOPMENT_ERRORS_MODE": "error answers are always short and carry no internals",
            "IMGPROXY_FAIL_ON_DEPRECATION": "no deprecated names are read",
            "IMGPROXY_FREE_MEMORY_INTERVAL": "see --malloc-trim-interval (glibc's malloc_trim, every 250 ms by default)",
            "IMGPROXY_LOG_MEM_STATS": "libvips is not used",
            "IMGPROXY_VIPS_CACHE_TRACE": "libvips is not used",
            "IMGPROXY_VIPS_LEAK_CHECK": "libvips is not used",
            "IMGPROXY_LOG_FORMAT": "not yet: start-up lines and errors go to stderr as text",
            "IMGPROXY_LOG_LEVEL": "not yet: start-up lines and errors go to stderr as text",
            "IMGPROXY_SOURCE_URL_QUERY_SEPARATOR": "not yet",
            "IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT": "libcurl keeps source connections by its own rules",
            "IMGPROXY_IGNORE_SSL_VERIFICATION": "refused on purpose: source certificates are always verified",
            "IMGPROXY_STRIP_METADATA": "metadata is always stripped (the copyright aside, IMGPROXY_KEEP_COPYRIGHT)",
            "IMGPROXY_ENFORCE_THUMBNAIL": "embedded thumbnails are not read",
            "IMGPROXY_USE_LINEAR_COLORSPACE": "not yet: resizing works on sRGB values",
            "IMGPROXY_PNG_INTERLACED": "not yet: PNGs are written non-interlaced",
            "IMGPROXY_PNG_QUANTIZE": "not yet: PNGs are written with their full colours",
            "IMGPROXY_PNG_QUANTIZATION_COLORS": "not yet: PNGs are written with their full colours",
            "IMGPROXY_PNG_UNLIMITED": "WebImage's decoders check IMGPROXY_MAX_SRC_RESOLUTION, not libvips's limits",
            "IMGPROXY_TIFF_UNLIMITED": "WebImage's decoders check IMGPROXY_MAX_SRC_RESOLUTION, not libvips's limits",
            "IMGPROXY_SVG_UNLIMITED": "libxml2's parser limits always apply to SVG sources",
            "IMGPROXY_WEBP_PRESET": "not yet: libwebp's default preset",
            "IMGPROXY_COOKIE_PASSTHROUGH": "not yet: cookies are not passed to sources",
            "IMGPROXY_COOKIE_PASSTHROUGH_ALL": "not yet: cookies are not passed to sources",
            "IMGPROXY_COOKIE_BASE_URL": "not yet: cookies are not passed to sources",
            "IMGPROXY_REPORT_DOWNLOADING_ERRORS": "no error-reporting service is supported",
            "IMGPROXY_REPORT_IO_ERRORS": "no error-reporting service is supported",
        ]
        reasons["IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE"] = "requests to a custom endpoint are always path-style"
        for name in ["S3_ASSUME_ROLE_ARN", "S3_ASSUME_ROLE_EXTERNAL_ID", "S3_ALLOWED_BUCKETS", "S3_DENIED_BUCKETS", "S3_ACCESS_POINTS",
                     "S3_USE_DECRYPTION_CLIENT"] {
            reasons["IMGPROXY_" + name] = "not yet: s3:// sources are read with the environment's AWS credentials, from any bucket"
        }
        let storage = "sources are http(s) and local:// only"
        for name in ["USE_GCS", "GCS_KEY", "GCS_ENDPOINT", "GCS_ALLOWED_BUCKETS", "GCS_DENIED_BUCKETS",
                     "USE_ABS", "ABS_NAME", "ABS_KEY", "ABS_ENDPOINT", "ABS_ALLOWED_BUCKETS", "ABS_DENIED_BUCKETS",
                     "USE_SWIFT", "SWIFT_USERNAME", "SWIFT_API_KEY", "SWIFT_AUTH_URL", "SWIFT_DOMAIN", "SWIFT_TENANT",
                     "SWIFT_AUTH_VERSION", "SWIFT_CONNECT_TIMEOUT_SECONDS", "SWIFT_TIMEOUT_SECONDS", "SWIFT_ALLOWED_BUCKETS",
                     "SWIFT_DENIED_BUCKETS"] {
            reasons["IMGPROXY_" + name] = storage
        }
        let monitoring = "no error-reporting, tracing or APM service is supported; metrics are at /metrics (Prometheus text)"
        for name in ["SENTRY_DSN", "SENTRY_ENVIRONMENT", "SENTRY_RELEASE", "AIRBRAKE_PROJECT_ID", "AIRBRAKE_PROJECT_KEY",
                     "AIRBRAKE_ENVIRONMENT", "BUGSNAG_KEY", "BUGSNAG_STAGE", "HONEYBADGER_KEY", "HONEYBADGER_ENV",
                     "NEW_RELIC_KEY", "NEW_RELIC_APP_NAME", "NEW_RELIC_LABELS", "NEW_RELIC_PROPAGATE_EXTERNAL",
                     "DATADOG_ENABLE", "DATADOG_ENABLE_ADDITIONAL_METRICS", "DATADOG_PROPAGATE_EXTERNAL",
                     "OPEN_TELEMETRY_ENABLE", "OPEN_TELEMETRY_ENABLE_METRICS", "OPEN_TELEMETRY_ENABLE_LOGS",
                     "OPEN_TELEMETRY_SERVER_CERT", "OPEN_TELEMETRY_CLIENT_CERT", "OPEN_TELEMETRY_CLIENT_KEY",
                     "OPEN_TELEMETRY_LOGGER_NAME", "OPEN_TELEMETRY_PROPAGATE_EXTERNAL", "OPEN_TELEMETRY_TRACE_ID_GENERATOR",
                     "CLOUD_WATCH_SERVICE_NAME", "CLOUD_WATCH_NAMESPACE", "CLOUD_WATCH_REGION"] {
            reasons["IMGPROXY_" + name] = monitoring
        }
        for name in ["SYSLOG_ENABLE", "SYSLOG_LEVEL", "SYSLOG_NETWORK", "SYSLOG_ADDRESS", "SYSLOG_TAG"] {
            reasons["IMGPROXY_" + name] = "not supported: logs go to stderr (a container's log)"
        }
        for name in ["ENV_LOCAL_FILE_PATH", "ENV_AWS_SECRET_ID", "ENV_AWS_SECRET_VERSION_ID", "ENV_AWS_SECRET_VERSION_STAGE",
                     "ENV_AWS_SECRET_REGION", "ENV_AWS_SSM_PARAMETERS_PATH", "ENV_AWS_SSM_PARAMETERS_REGION", "ENV_GCP_KEY",
                     "ENV_GCP_SECRET_ID", "ENV_GCP_SECRET_VERSION_ID", "ENV_GCP_SECRET_PROJECT_ID"] {
            reasons["IMGPROXY_" + name] = "not supported: the environment is read from the process only (an env file or secret store must set it)"
        }
        reasons["IMGPROXY_PPROF_BIND"] = "Go's profiler: not applicable"
        for name in modelSettings {
            reasons[name] = "no machine-learning model is run: autoquality's ml method is answered as dssim, as imgproxy answers it without a model"
        }
        return reasons
    }()
}
