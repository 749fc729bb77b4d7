#include "server/service/offline_table.h"

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/files.h"
#include "server/service/answer.h"
#include "server/store/quick_start.h"
#include "server/store/tables.h"

namespace cutune::service {

absl::StatusOr<std::unique_ptr<OfflineTable>> OfflineTable::Open(const std::string& path) {
  // The tables, all read before anything is created: a file, or a directory's *.json files.
  std::error_code ec;
  std::vector<std::string> files = {path};
  if (std::filesystem::is_directory(path, ec)) {
    files = store::TableFilesIn(path);
    if (files.empty()) {
      return absl::NotFoundError(
          absl::StrCat(path, ": no tuning table (*.json) in this directory"));
    }
  }
  std::vector<std::string> texts;
  for (const std::string& file : files) {
    auto text = ReadFile(file);
    if (!text.ok()) return text.status();
    texts.push_back(*std::move(text));
  }
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "cutune-table-XXXXXX").string();
  if (ec) pattern = "/tmp/cutune-table-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a directory for the table's store (",
                                            pattern, ")"));
  }
  const std::string dir = pattern;
  auto cleanup_on_error = [&dir](absl::Status s) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return s;
  };
  store::StoreOptions options = StoreRules();
  options.durable = false;  // thrown away with this object: no fsync
  auto store = store::Store::Open(dir + "/table.db", options);
  if (!store.ok()) return cleanup_on_error(store.status());
  for (size_t i = 0; i < files.size(); ++i) {
    auto stats =
        store::ImportTable(**store, texts[i], ImportRules(store::MergePolicy::kKeepFaster));
    if (!stats.ok()) {
      return cleanup_on_error(absl::Status(stats.status().code(),
                                           absl::StrCat(files[i], ": ", stats.status().message())));
    }
  }
  return std::unique_ptr<OfflineTable>(new OfflineTable(path, dir, *std::move(store)));
}

OfflineTable::OfflineTable(std::string path, std::string dir, std::unique_ptr<store::Store> store)
    : path_(std::move(path)), dir_(std::move(dir)), store_(std::move(store)) {}

OfflineTable::~OfflineTable() {
  store_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::StatusOr<pb::GetBestConfigResponse> OfflineTable::Answer(
    const pb::GetBestConfigRequest& request, int driver_version) const {
  if (request.on_miss() == pb::GetBestConfigRequest::ON_MISS_ANSWER_NOW_AND_TUNE ||
      request.on_miss() == pb::GetBestConfigRequest::ON_MISS_WAIT_FOR_TUNING) {
    return absl::FailedPreconditionError(
        absl::StrCat("a table file cannot tune (", path_, "): ask a daemon with a GPU"));
  }
  if (request.device().by_case() == pb::DeviceSelector::kOrdinal ||
      request.device().by_case() == pb::DeviceSelector::kUuid) {
    return absl::InvalidArgumentError(
        "a table file answers by device model (device.model), not by GPU ordinal or uuid");
  }
  auto problem = Validate(request.problem());
  if (!problem.ok()) return problem.status();
  auto described = DescribedGpu(request.device());
  if (!described.ok()) return described.status();
  auto model = ModelFromTables(*store_, request.device().model(), {}, *described);
  if (!model.ok()) return model.status();
  const AnswerDevice device{model->name, model->cc_major, model->cc_minor, driver_version,
                            model->sm_count};
  const store::LookupResult found = store_->Lookup(LookupQueryFor(*problem, device));
  pb::GetBestConfigResponse response;
  FillAnswer(*problem, device, found, request.include_source(), &response);
  return response;
}

absl::StatusOr<std::vector<Params>> OfflineTable::QuickStart(
    const store::DeviceModel& device, const kernels::KernelFamily& family, DType dtype,
    const Shape& shape) const {
  return store::QuickStart(*store_, device, family.name(), dtype, shape, family.starters(),
                           family.baseline());
}

}  // namespace cutune::service
