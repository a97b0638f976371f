/// The help text of the `webimage` tool.
enum Usage {
    /// `webimage serve`'s part (also what `webimage serve --help` and `webimage help serve` print).
    static let serve = """
           webimage serve [--bind 0.0.0.0] [--port 8080] [--cache-dir DIR] [--key HEX --salt HEX | --unsigned]
                          [--max-inflight N] [--queue N] [--allow-host PATTERN]... [--source-policy default|loopback|public-only]
                          [--memory-limit MIB] [--variant-memory-limit MIB] [--malloc-arenas N] [--disk-limit MIB]
                          [--keep-sources] [--realtime-http] [--demo]
                          [--redis URL]... [--redis-namespace NAME] [--s3-bucket NAME] [--s3-endpoint URL] [--s3-region NAME]
                          [--s3-namespace NAME] [--redis-timeout MS] [--redis-fill-wait S]
                          [--preset NAME=OPTIONS]... [--presets-file FILE] [--watermark PATH|URL] [--local-root DIR]
                          [--allow-security-options] [--auto-format]
                                        an image server for imgproxy-style URLs on libmicrohttpd, until Ctrl-C or
                                        SIGTERM (then it drains, flushes the cache and exits 0); see the README
      --bind, --port  where to listen (default 0.0.0.0:8080, every interface, as imgproxy)
      --key, --salt   imgproxy's URL signature key and salt, in hex; without them (or IMGPROXY_KEY/SALT) URLs are
                      unsigned, as with imgproxy (a warning is printed; --unsigned says it on purpose)
      --max-inflight  requests processed at once (default twice the cores); --queue N more wait (default 64),
                      the rest get 429
      --allow-host P  source hosts allowed (example.com, *.example.com; repeatable; default any)
      --memory-limit  the memory tier of decoded pixels, in MiB (default 0: none; a server reuses encoded
                      variants); --variant-memory-limit MIB: the memory tier of encoded variants (default 64)
      --malloc-arenas glibc allocator arenas (default 2; glibc's 8 per core with --realtime-http; MALLOC_ARENA_MAX wins);
                      --malloc-trim-interval MS: freed allocator memory given back that often (default 250; 0: never)
      --disk-limit    the disk tier's size in MiB (default 1024; 0: no limit); --keep-sources keeps sources'
                      bytes on disk too, so other sizes of a source are made without downloading it again
      --realtime-http libmicrohttpd's threads (memory hits, /health) in the real-time class (SCHED_RR 1), so they
                      never wait for a core cold work holds; needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 1
      --demo          serve the demo page at / (its samples are fetched from this server: loopback sources are
                      allowed, and it listens on 127.0.0.1 unless --bind or IMGPROXY_BIND names an address)
      --source-policy default (imgproxy's): no loopback, link-local (the cloud metadata service) or unspecified
                      source addresses; loopback: loopback allowed too; public-only: also no private, shared or
                      multicast ones (users type the URLs)
      --preset NAME=OPTIONS  an imgproxy preset (NAME=rs:fit:300:300/q:80; "default" applies to every URL;
                      repeatable); --presets-file FILE: one per line (# comments)
      --watermark PATH|URL  the picture of imgproxy's watermark option (a file, or an http(s) URL)
      --local-root DIR  serve local:///path sources from under DIR (never outside it)
      --allow-security-options  let URLs carry imgproxy's max_src_resolution, max_src_file_size and the like
      --auto-format   choose AVIF or WebP from the Accept header when the URL names no format (Vary: Accept)
      --redis URL, --redis-namespace, --redis-timeout MS, --redis-fill-wait S, --s3-bucket NAME, --s3-endpoint URL,
      --s3-region NAME, --s3-namespace NAME: the shared tiers, as for webimage fetch (webimage help)
      environment     imgproxy's configuration is read first (the flags win); Docs/imgproxy-config.md has the table:
                      \(ImgproxyEnvironment.honouredNames.joined(separator: " "))

           webimage health [URL]        GET URL (default http://127.0.0.1:8080/health, or the port of $IMGPROXY_BIND or
                                        $PORT) and exit 0 when it answers 200, else 1: a container's health check

           webimage formats             every format the registry knows, a tab-separated line each: names, media
                                        type, extension, whether the tool writes it, default quality, traits

    """

    static let text = """
    usage: webimage                     load the sample images shipped with the package through the whole
                                        pipeline twice (file URLs, a temporary disk cache; the second pass
                                        comes from the cache), print a table, and write a PNG thumbnail of
                                        each, derived from the cached originals, into ./webimage-samples/
           webimage decode [--checksum] [--frames] [--orient] [--page N] [--icon-size N] [--thumbnail N]
                           [--transform SPEC] [--out DIR] [--format F] FILE...
                                        one tab-separated line per file:
                                        path, format, width, height, pixel format[, sha256 of RGBA pixels]
                                        a file that fails prints: path, error, message (exit code 1)
      --checksum      add the sha256 of the pixels as 8-bit straight-alpha RGBA (the corpus manifest's definition)
      --frames        one line per frame instead: path, format, width, height, pixel format, frame (from 0),
                      frames, stored duration in ms, loop count (0 = forever), sha256 of the composited canvas;
                      for a multi-page TIFF one line per page (pages may differ in size)
      --page N        the page of a multi-page file (TIFF) to decode, from 0 (default 0)
      --icon-size N   an icon's (ICO, CUR) entry nearest N pixels (default the largest)
      --orient        apply the EXIF orientation before reporting and hashing (default: stored pixels)
      --thumbnail N   decode to fit inside N x N pixels (aspect ratio kept, never enlarged)
      --transform SPEC  transform each image after decoding (upright first); SPEC below
      --out DIR       write each decoded image into DIR as <name>.png (or the --format's extension)
      --format F      the format --out writes, by any name of `webimage formats`: png (default), jpeg,
                      gif, webp, avif, jxl, tiff, bmp, ico, ...; animations stay animated in png (APNG),
                      gif, webp, avif and jxl

           webimage fetch [--thumbnail N] [--transform SPEC] [--out DIR] [--cache-dir DIR] [--concurrency N]
                          [--refresh] [--format auto|jpeg|png|gif|webp|avif [--quality Q] [--accept HEADER]]
                          [--keep-profile] [--keep-copyright] [--redis URL]... [--redis-namespace NAME]
                          [--s3-bucket NAME [--s3-endpoint URL] [--s3-region NAME] [--s3-namespace NAME]] URL...
                                        load each URL (http, https, s3, file, data, or a local path) through the
                                        manager; one tab-separated line per URL: url, source tier
                                        (none/memory/disk), width, height, bytes (- when none), ms; or url,
                                        error, message. A summary and (on a terminal) a progress bar go to
                                        stderr; exit code 1 if any failed.
      --thumbnail N   decode to fit inside N x N pixels (cached under its own key)
      --transform SPEC  transform each image (cached under its own key, derived from a cached original)
      --out DIR       write each image into DIR (JPEG sources as .jpg, everything else as .png)
      --cache-dir DIR the disk cache folder (default: the shared cache's folder)
      --concurrency N loads and downloads at once (default 6)
      --refresh       revalidate cached images with the server (ETag / Last-Modified)
      --format F      load encoded variants in format F (auto: AVIF or WebP when --accept lists them,
                      else JPEG, PNG or GIF by the source), cached as such: a warm run decodes nothing;
                      --out then writes each variant's bytes as soon as it is loaded; the line adds
                      the format
      --quality Q     the variants' lossy quality, 1-100 (default 90)
      --accept H      the Accept header --format auto chooses for, e.g. 'image/avif,image/webp,*/*'
      --keep-profile  keep each source's pixels and ICC profile (default: converted to sRGB, no profile)
      --keep-copyright  keep each source's EXIF copyright notice in its variant (default: no metadata)
      --redis URL     a shared cache tier on Redis, redis://[:password@]host:port[/db], behind the memory and
                      disk tiers (repeat for several servers; keys spread by rendezvous hashing); processes
                      sharing it fetch each URL from the origin once between them. A failing Redis only
                      slows loads down. Also for serve.
      --redis-namespace NAME  keys are webimage:v1:NAME:<md5> (default: default)
      --s3-bucket NAME  a durable shared tier in an S3-compatible bucket, behind memory, disk and Redis: hits
                      are promoted into them, stores reach the bucket in the background; a failing store only
                      slows loads down. Also for serve. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
                      AWS_SESSION_TOKEN. s3://bucket/key sources load with or without it
      --s3-endpoint URL the store (default AWS: https://s3.REGION.amazonaws.com; path-style addressing for a
                      custom endpoint such as MinIO's http://127.0.0.1:9000)
      --s3-region NAME  the signing region (default AWS_REGION, else us-east-1)
      --s3-namespace NAME  keys are webimage/v1/NAME/<md5> (default: default); entries live 7 days
      --redis-timeout MS      connect and command time-out (default 250); --redis-fill-wait S: how long a
                              process's claim to fetch a URL for the fleet lives, and others wait for it (default 10)

           webimage info [--json] [--cache-dir DIR] [--placeholder-pixels DIR] FILE|URL...
                                        the facts of each image through the manager, from a small decode
                                        (never a full-size one); one tab-separated line per input: input, format,
                                        width, height (upright), frames, bytes, alpha|opaque, EXIF orientation,
                                        colour profile name (- when none), BlurHash (4x3), ThumbHash (base64),
                                        average and dominant colours (#rrggbbaa), tier (none/memory/disk); or
                                        input, error, message (exit code 1)
      --json          one JSON object per input instead: /info's fields (all of them) plus file and tier
      --cache-dir DIR cache the facts and sources there (default: a temporary folder, removed at exit)
      --placeholder-pixels DIR  also write the pixels each encoder read (<n>-blurhash.png, RGB composited over
                      white; <n>-thumbhash.png, RGBA) and add their paths to the JSON (scripts/placeholder-check.py)

    \(serve)
           webimage cache stats [DIR | --cache-dir DIR]   entries and bytes of a disk cache directory
                                                          (default: the shared cache's folder)
           webimage cache sweep [DIR] [--max-age SECONDS] [--max-size BYTES]
                                                 remove expired entries, then least recently used ones
                                                 down to half of --max-size; print the report
           webimage cache clear [DIR | --cache-dir DIR]   remove every entry
           webimage cache fill [DIR] [--count N] [--size PIXELS]
                                                 store N generated PNG images (keys fill-0.png ...)

    SPEC (for --transform): steps separated by ';', applied in order, each NAME=ARGS with ARGS split by ','
      resize=WxH[,fill|fit|cover]   stretch (default), fit inside, or cover and crop the overflow; resize=N is NxN
      crop=X,Y,WxH                  keep a rectangle (clipped to the image)
      round=R[,border=W][,color=C][,corners=tl+tr+bl+br]   round corners (anti-aliased; adds alpha)
      flip=h|v|hv                   mirror left-right, top-bottom, or both
      rotate=DEGREES[,keep]         turn clockwise; the canvas grows to fit unless 'keep'
      tint=C                        wash with a colour (its alpha is the strength)
      blur=R                        Gaussian blur with standard deviation R pixels
      colours C: #RRGGBB, #RRGGBBAA, black, white, gray, red, green, blue, clear
      example: --transform "resize=256x256,cover;round=128,border=4,color=white"

    """
}
