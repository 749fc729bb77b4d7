// cutuned's flags and its --config file (CLI11's TOML/INI reader): every flag can be set in the
// file, the command line wins, an unknown key or bad value is an error naming it, and the shipped
// example file lists every flag and parses. The last test starts the real daemon from a file.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/daemon_flags.h"
#include "tests/service/harness.h"

namespace cutune::service::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Parsed {
  std::optional<int> exit;
  DaemonFlags flags;
  std::string out, err;
};

Parsed Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cutuned");
  Parsed parsed;
  std::ostringstream out, err;
  parsed.exit = ParseDaemonFlags(args, parsed.flags, out, err);
  parsed.out = out.str();
  parsed.err = err.str();
  return parsed;
}

std::string Write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.File(name);
  std::ofstream(path) << text;
  return path;
}

TEST(DaemonFlagsTest, EveryFlagCanBeSetInTheConfigFile) {
  CLI::App app;
  DaemonFlags flags;
  AddDaemonFlags(app, flags);
  int checked = 0;
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_name();
    if (name == "--help" || name == "--config") continue;
    EXPECT_TRUE(option->get_configurable()) << name;
    ++checked;
  }
  EXPECT_GE(checked, 22);
}

TEST(DaemonFlagsTest, ReadsTomlAndTheCommandLineWins) {
  TempDir dir;
  const std::string config = Write(dir, "cutuned.toml",
                                   "# a comment\n"
                                   "listen = \"unix:/run/cutune/cutuned.sock\"\n"
                                   "metrics-listen = \"127.0.0.1:9464\"\n"
                                   "db = \"/var/lib/cutune/cutune.db\"\n"
                                   "max-threads = 128\n"
                                   "grace-seconds = 2.5\n"
                                   "allow-insecure-remote = true\n"
                                   "reflection = false\n"
                                   "log-format = \"json\"\n"
                                   "log-level = \"debug\"\n");
  Parsed file = Parse({"--config", config});
  ASSERT_FALSE(file.exit) << file.err;
  EXPECT_EQ(file.flags.config, config);
  EXPECT_EQ(file.flags.listen, "unix:/run/cutune/cutuned.sock");
  EXPECT_EQ(file.flags.http_listen, "127.0.0.1:9464");
  EXPECT_EQ(file.flags.db, "/var/lib/cutune/cutune.db");
  EXPECT_EQ(file.flags.max_threads, 128);
  EXPECT_EQ(file.flags.grace_seconds, 2.5);
  EXPECT_TRUE(file.flags.allow_insecure_remote);
  EXPECT_FALSE(file.flags.reflection);
  EXPECT_EQ(file.flags.log_format, "json");
  EXPECT_EQ(file.flags.log_level, "debug");
  EXPECT_EQ(file.flags.max_streams, 64);  // not in the file: the default

  Parsed both = Parse({"--listen", "127.0.0.1:7000", "--config", config, "--max-threads=64",
                       "--reflection", "--log-format", "text"});
  ASSERT_FALSE(both.exit) << both.err;
  EXPECT_EQ(both.flags.listen, "127.0.0.1:7000");
  EXPECT_EQ(both.flags.max_threads, 64);
  EXPECT_TRUE(both.flags.reflection);
  EXPECT_EQ(both.flags.log_format, "text");
  EXPECT_EQ(both.flags.db, "/var/lib/cutune/cutune.db");  // still the file's
}

TEST(DaemonFlagsTest, ReadsIniToo) {
  TempDir dir;
  const std::string config =
      Write(dir, "cutuned.ini", "; INI\nlisten=127.0.0.1:7001\nmax-queue=3\n");
  Parsed parsed = Parse({"--config", config});
  ASSERT_FALSE(parsed.exit) << parsed.err;
  EXPECT_EQ(parsed.flags.listen, "127.0.0.1:7001");
  EXPECT_EQ(parsed.flags.max_queue, 3);
}

TEST(DaemonFlagsTest, AnUnknownKeyIsAnErrorNamingItAndTheFile) {
  TempDir dir;
  const std::string config =
      Write(dir, "c.toml", "listen = \"127.0.0.1:1\"\nlisten-address = \"x\"\n");
  Parsed parsed = Parse({"--config", config});
  EXPECT_EQ(parsed.exit, kExitUsage);
  EXPECT_THAT(parsed.err, HasSubstr("cutuned: --config " + config +
                                    ": unknown key 'listen-address' (a key is a flag's name "
                                    "without '--'; cutuned --help lists them)"));
}

TEST(DaemonFlagsTest, ABadValueInTheFileIsAnErrorNamingItAndTheFile) {
  TempDir dir;
  for (const auto& [text, named] : std::vector<std::pair<std::string, std::string>>{
           {"max-threads = 2\n", "--max-threads"},
           {"max-threads = \"many\"\n", "--max-threads"},
           {"log-format = \"xml\"\n", "--log-format"},
           {"log-level = \"loud\"\n", "--log-level"},
           {"grace-seconds = \"soon\"\n", "--grace-seconds"}}) {
    const std::string config = Write(dir, "bad.toml", text);
    Parsed parsed = Parse({"--config", config});
    EXPECT_EQ(parsed.exit, kExitUsage) << text;
    EXPECT_THAT(parsed.err, HasSubstr("cutuned: --config " + config + ": ")) << text;
    EXPECT_THAT(parsed.err, HasSubstr(named)) << text;
  }
}

TEST(DaemonFlagsTest, ABadValueOnTheCommandLineDoesNotBlameTheFile) {
  TempDir dir;
  const std::string config = Write(dir, "ok.toml", "max-queue = 3\n");
  Parsed parsed = Parse({"--config", config, "--max-threads", "2"});
  EXPECT_EQ(parsed.exit, kExitUsage);
  EXPECT_THAT(parsed.err, HasSubstr("--max-threads"));
  EXPECT_THAT(parsed.err, Not(HasSubstr("--config")));
}

TEST(DaemonFlagsTest, AMissingConfigFileOrFlagErrorExitsTwoLikeEveryUsageError) {
  TempDir dir;
  Parsed missing = Parse({"--config", dir.File("absent.toml")});
  EXPECT_EQ(missing.exit, kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("absent.toml"));
  EXPECT_EQ(Parse({"--no-such-flag"}).exit, kExitUsage);
  EXPECT_EQ(Parse({"--log-level", "loud"}).exit, kExitUsage);
  const std::string help = Write(dir, "help.toml", "help = true\n");
  Parsed in_file = Parse({"--config", help});
  EXPECT_EQ(in_file.exit, kExitUsage);
  Parsed asked = Parse({"--help"});
  EXPECT_EQ(asked.exit, 0);
  EXPECT_THAT(asked.out, HasSubstr("--config"));
  EXPECT_THAT(asked.out, HasSubstr("--http-listen"));
  EXPECT_THAT(asked.out, HasSubstr("--metrics-listen"));
}

// --metrics-listen was the HTTP server's first name: old command lines and files still work,
// and messages name the flag the operator wrote.
TEST(DaemonFlagsTest, MetricsListenIsAnAliasOfHttpListen) {
  Parsed current = Parse({"--http-listen", "127.0.0.1:9464"});
  ASSERT_FALSE(current.exit) << current.err;
  EXPECT_EQ(current.flags.http_listen, "127.0.0.1:9464");
  EXPECT_EQ(current.flags.http_listen_flag, "--http-listen");
  Parsed old = Parse({"--metrics-listen", "127.0.0.1:9465"});
  ASSERT_FALSE(old.exit) << old.err;
  EXPECT_EQ(old.flags.http_listen, "127.0.0.1:9465");
  EXPECT_EQ(old.flags.http_listen_flag, "--metrics-listen");
  TempDir dir;
  Parsed file = Parse({"--config", Write(dir, "old.toml", "metrics-listen = \"127.0.0.1:9466\"\n")});
  ASSERT_FALSE(file.exit) << file.err;
  EXPECT_EQ(file.flags.http_listen, "127.0.0.1:9466");
}

// The shipped example names every flag (commented out or not), and parses with each of its
// settings switched on.
TEST(DaemonFlagsTest, TheShippedExampleListsEveryFlagAndParses) {
  std::ifstream in(std::string(CUTUNE_DEPLOY_DIR) + "/cutuned.toml.example");
  ASSERT_TRUE(in) << CUTUNE_DEPLOY_DIR;
  std::string line, uncommented;
  std::set<std::string> keys;
  const std::regex setting(R"(^(# )?([a-z-]+) = (.*)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, setting)) continue;
    keys.insert(m[2]);
    uncommented += m[2].str() + " = " + m[3].str() + "\n";
  }
  CLI::App app;
  DaemonFlags flags;
  AddDaemonFlags(app, flags);
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_name();
    if (name == "--help" || name == "--config") continue;
    EXPECT_TRUE(keys.count(name.substr(2))) << name << " is missing from cutuned.toml.example";
  }
  TempDir dir;
  Parsed parsed = Parse({"--config", Write(dir, "all.toml", uncommented)});
  ASSERT_FALSE(parsed.exit) << parsed.err;
  EXPECT_EQ(parsed.flags.http_listen, "127.0.0.1:9464");
  EXPECT_EQ(parsed.flags.max_threads, 256);
}

TEST(DaemonConfigTest, CutunedListensWhereItsConfigFileSaysAndAFlagOverridesIt) {
  TempDir dir;
  const std::string socket = dir.File("from-file.sock");
  const std::string config = Write(dir, "cutuned.toml",
                                   "listen = \"unix:" + socket +
                                       "\"\n"
                                       "db = \"" +
                                       dir.File("c.db") +
                                       "\"\n"
                                       "worker = \"" +
                                       FakeWorker() +
                                       "\"\n"
                                       "cache-dir = \"" +
                                       dir.File("cache") +
                                       "\"\n"
                                       "http-listen = \"127.0.0.1:0\"\n"
                                       "log-format = \"json\"\n");
  {
    auto daemon = Daemon::StartExactly({"--config", config}, "unix:" + socket);
    ASSERT_NE(daemon, nullptr);
    pb::ListDevicesResponse devices;
    ASSERT_TRUE(daemon->stub().ListDevices(Context().get(), {}, &devices).ok());
    EXPECT_EQ(devices.devices(0).name(), "Fake GPU");
    EXPECT_THAT(daemon->log(), HasSubstr("\"event\":\"daemon.started\""));
    EXPECT_THAT(daemon->log(), HasSubstr("\"listen\":\"unix:" + socket + "\""));
    EXPECT_THAT(daemon->log(), HasSubstr("\"metrics_listen\":\"127.0.0.1:"));
    EXPECT_EQ(daemon->Stop(SIGTERM, std::chrono::seconds(15)), 0);
  }
  const std::string other = dir.File("from-flag.sock");
  auto daemon = Daemon::StartExactly(
      {"--config", config, "--listen", "unix:" + other, "--log-format", "text"}, "unix:" + other);
  ASSERT_NE(daemon, nullptr);
  pb::ListDevicesResponse devices;
  ASSERT_TRUE(daemon->stub().ListDevices(Context().get(), {}, &devices).ok());
  EXPECT_THAT(daemon->log(), HasSubstr(" INFO daemon.started "));
  EXPECT_THAT(daemon->log(), HasSubstr(" listen=unix:" + other + " "));

  std::string output;
  const std::string bad = Write(dir, "bad.toml", "listn = \"unix:/tmp/x\"\n");
  EXPECT_EQ(Daemon::RunToExit({"--config", bad}, &output), kExitUsage);
  EXPECT_THAT(output, HasSubstr("unknown key 'listn'"));
}

}  // namespace
}  // namespace cutune::service::testing
