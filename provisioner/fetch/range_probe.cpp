#include "fetch/range_probe.hpp"

#include "fetch/resume_headers.hpp"

namespace lume_unlock::fetch {

RangeSupport
probe_ranges(util::HttpClient& http, const DownloadPlan& plan, const std::string& validator) {
  RangeSupport support;
  util::HttpRequest request = download_request(plan);
  request.headers.push_back({"Range", "bytes=0-0"});
  if (!validator.empty()) {
    request.headers.push_back({"If-Range", validator});
  }
  bool partial = false;
  request.on_sink_start = [&](long status, const std::vector<util::HttpHeader>& headers) {
    util::HttpResponse answer;
    answer.headers = headers;
    partial = status == 206;
    if (partial) {
      const auto range = parse_content_range(answer.header("Content-Range").value_or(""));
      partial = range.start == 0u;
      support.size = range.total;
      support.etag = strong_etag(answer.header("ETag").value_or("")).value_or("");
    }
    support.whole_file = status == 200;
    return partial; // a 200 is the whole file: stop it here
  };
  request.body_sink = [](std::string_view) { return true; };
  auto response = http.send(request);
  support.ranges = partial && response.ok() && response.value().status == 206;
  return support;
}

} // namespace lume_unlock::fetch
