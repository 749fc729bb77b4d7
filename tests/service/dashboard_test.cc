// The read-only dashboard of a real cutuned (fake GPU worker) on its --http-listen address: the
// pages after a small sweep, loaded in headless Chromium (the DOM says what a reader sees, the
// screenshot is not blank and shows the winner's colour), its token rules, and GET only.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "charts/svg.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/client/png.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::AllOf;
using ::testing::StartsWith;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRead[] = "dashboard-read-token";
constexpr char kAdmin[] = "dashboard-admin-token";

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::pair<std::string, int> HttpAddress(const Daemon& daemon) {
  const std::string address = daemon.LoggedValue("daemon.started", "metrics_listen");
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return {"", 0};
  return {address.substr(0, colon), std::stoi(address.substr(colon + 1))};
}

// Headless Chromium on `url`: its DOM after scripts ran, and a screenshot (saved where
// CUTUNE_KEEP_DASHBOARD names a folder, as NAME.png).
struct Loaded {
  std::string dom;
  std::string png;
};
Loaded Chromium(const TempDir& dir, const std::string& url, const std::string& name,
                int height) {
  const std::string chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) return {};
  const std::string common = absl::StrCat(
      chromium, " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--hide-scrollbars --force-color-profile=srgb --virtual-time-budget=3000 --user-data-dir=",
      dir.File("profile-" + name), " --window-size=1300,", height, " ");
  const std::string dom = dir.File(name + ".html"), png = dir.File(name + ".png");
  std::system(absl::StrCat("HOME=", dir.path().string(), " timeout 120 ", common, "--dump-dom '",
                           url, "' > ", dom, " 2>/dev/null")
                  .c_str());
  std::system(absl::StrCat("HOME=", dir.path().string(), " timeout 120 ", common,
                           "--screenshot=", png, " '", url, "' > /dev/null 2>&1")
                  .c_str());
  if (const char* keep = std::getenv("CUTUNE_KEEP_DASHBOARD")) {
    std::filesystem::create_directories(keep);
    std::filesystem::copy_file(png, std::filesystem::path(keep) / (name + ".png"),
                               std::filesystem::copy_options::overwrite_existing);
  }
  return {Slurp(dom), Slurp(png)};
}

// Not blank: many colours, and white not nearly everywhere; `colour` covers `pixels` at least.
void ExpectDrawn(const std::string& png, const char* colour, int64_t pixels) {
  auto image = cutune::testing::DecodePng(png);
  ASSERT_TRUE(image.ok()) << image.status();
  std::map<uint32_t, int64_t> histogram;
  for (uint32_t p : image->pixels) ++histogram[p];
  EXPECT_GT(histogram.size(), 40u) << "too few colours: is the page blank?";
  EXPECT_LT(histogram[0xffffff] + histogram[0xfafafa],
            static_cast<int64_t>(image->pixels.size()) * 19 / 20);
  EXPECT_GE(histogram[std::stoul(colour + 1, nullptr, 16)], pixels) << colour;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string admin = dir_.File("admin"), read = dir_.File("read");
    std::ofstream(admin) << kAdmin << "\n";
    std::ofstream(read) << kRead << "\n";
    for (const std::string& f : {admin, read}) {
      std::filesystem::permissions(
          f, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    daemon_ = Daemon::Start({"--db", dir_.File("d.db"), "--worker", FakeWorker(),
                             "--http-listen", "127.0.0.1:0", "--admin-tokens", admin,
                             "--read-tokens", read});
    ASSERT_NE(daemon_, nullptr);
    std::tie(host_, port_) = HttpAddress(*daemon_);
    ASSERT_EQ(host_, "127.0.0.1") << daemon_->log();
    pb::StartTuningResponse started;
    ASSERT_TRUE(daemon_->stub()
                    .StartTuning(Context(std::chrono::seconds(30), kAdmin).get(),
                                 SmallJob(256, 256, {1, 2, 4, 8, 16, 32}), &started)
                    .ok());
    job_ = started.job_id();
    pb::Tuner::Stub& stub = daemon_->stub();
    (void)stub;
    // WaitForJob sends no token: poll ListJobs with the read token instead.
    for (int i = 0; i < 600; ++i) {
      pb::ListJobsResponse jobs;
      ASSERT_TRUE(daemon_->stub().ListJobs(Context(std::chrono::seconds(5), kRead).get(), {}, &jobs).ok());
      if (!jobs.jobs().empty() && jobs.jobs(0).state() == pb::JobProgress::STATE_SUCCEEDED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::string Url(const std::string& path) {
    return absl::StrCat("http://", host_, ":", port_, path);
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
  std::string host_;
  int port_ = 0;
  std::string job_;
};

TEST_F(DashboardTest, PagesNeedATokenAndABrowserKeepsItInACookie) {
  httplib::Client client(host_, port_);
  auto anonymous = client.Get("/");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_THAT(anonymous->body, AllOf(HasSubstr("A token is needed"), HasSubstr("name=\"token\"")));
  auto wrong = client.Get("/?token=nope");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  EXPECT_THAT(metrics->body, Not(HasSubstr("<html")));  // scrapers get text

  auto with_query = client.Get(absl::StrCat("/sweep?job=", job_, "&token=", kRead));
  ASSERT_TRUE(with_query);
  EXPECT_EQ(with_query->status, 303);
  EXPECT_EQ(with_query->get_header_value("Location"), "/sweep?job=" + job_);
  // The other query values go back percent-encoded (the client decodes them again): none can
  // end the header and start another.
  auto odd = client.Get(absl::StrCat("/sweep?family=a%0d%0aX-Evil:%201&token=", kRead));
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->status, 303);
  EXPECT_FALSE(odd->has_header("X-Evil"));
  EXPECT_THAT(odd->get_header_value("Location"), StartsWith("/sweep?family=a"));  // not dropped
  EXPECT_THAT(with_query->get_header_value("Set-Cookie"),
              AllOf(HasSubstr(absl::StrCat("cutune_token=", kRead)), HasSubstr("HttpOnly"),
                    HasSubstr("SameSite=Strict")));
  auto with_cookie = client.Get("/", {{"Cookie", absl::StrCat("cutune_token=", kRead)}});
  ASSERT_TRUE(with_cookie);
  EXPECT_EQ(with_cookie->status, 200);
  EXPECT_THAT(with_cookie->get_header_value("Content-Security-Policy"),
              HasSubstr("default-src 'none'"));
  auto with_header = client.Get("/tables", {{"Authorization", absl::StrCat("Bearer ", kRead)}});
  ASSERT_TRUE(with_header);
  EXPECT_EQ(with_header->status, 200);
  // Read-only: nothing but GET (and HEAD) is served.
  auto post = client.Post("/", {{"Authorization", absl::StrCat("Bearer ", kAdmin)}}, "x",
                          "text/plain");
  ASSERT_TRUE(post);
  EXPECT_NE(post->status, 200);
  EXPECT_THAT(daemon_->log(), HasSubstr("transport=http"));
  EXPECT_THAT(daemon_->log(), Not(HasSubstr(kRead)));  // never logged
}

TEST_F(DashboardTest, PagesShowDevicesJobsPicturesAndTablesInChromium) {
  if (!std::filesystem::exists("/usr/bin/chromium")) GTEST_SKIP() << "no /usr/bin/chromium";
  const std::string token = absl::StrCat("token=", kRead);
  // Each page opened with ?token= is answered 303 with the cookie, and Chromium follows it.
  Loaded overview = Chromium(dir_, Url("/?" + token), "overview", 700);
  EXPECT_THAT(overview.dom, AllOf(HasSubstr("Fake GPU"), HasSubstr("GPU-fake-0"),
                                  HasSubstr(job_), HasSubstr("succeeded"),
                                  HasSubstr("12 / 12"), HasSubstr("data-live=\"no\"")))
      << overview.dom;
  ExpectDrawn(overview.png, "#2a9d8f", 200);  // the ready/succeeded badges

  Loaded sweep = Chromium(dir_, Url(absl::StrCat("/sweep?job=", job_, "&", token)), "sweep", 2100);
  EXPECT_THAT(sweep.dom,
              AllOf(HasSubstr("transpose 256x256 f32 on Fake GPU"), HasSubstr("Every candidate, sorted"),
                    HasSubstr("Time against each parameter"), HasSubstr("Best so far against evaluations"),
                    HasSubstr("Outcome of every candidate"), HasSubstr("Registers and shared memory"),
                    HasSubstr("Winner against the measured ceiling"), HasSubstr("sweep 1 · source "),
                    HasSubstr("NVRTC "), HasSubstr("within 1%")))
      << sweep.dom.substr(0, 2000);
  EXPECT_THAT(sweep.dom, Not(HasSubstr("http://www.w3.org/1999/xlink")));
  ExpectDrawn(sweep.png, charts::kWinnerColour, 30);

  Loaded tables = Chromium(dir_, Url("/tables?" + token), "tables", 700);
  EXPECT_THAT(tables.dom, AllOf(HasSubstr("winners held"), HasSubstr("transpose 256x256 f32"),
                                HasSubstr("sweep 1"), HasSubstr("current")))
      << tables.dom;
  ExpectDrawn(tables.png, "#2a9d8f", 100);
}

}  // namespace
}  // namespace cutune::service::testing
