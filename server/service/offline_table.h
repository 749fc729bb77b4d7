// A table file (or a directory of them) answered in-process, with no daemon: a private store in a
// temporary directory, the table imported with the daemon's rules, and lookups through the daemon's
// ladder and answer builder (answer.h), so an offline answer is the one a table server would give.
// Used by the client library's offline fallback, `cutune get --table` and cutune-bench's quick
// rows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cutune/v1/cutune.pb.h"
#include "kernels/family.h"
#include "server/core/types.h"
#include "server/store/store.h"

namespace cutune::service {

namespace pb = ::cutune::v1;

class OfflineTable {
 public:
  // Reads and imports `path`: a table file, or a directory's *.json tables in name order, as
  // `cutuned --tables DIR` imports them (tables/ holds one file per GPU model, and a GPU one file
  // holds only part of is answered as that daemon would: the rest from another model of its
  // architecture). A table that does not parse or validate is INVALID_ARGUMENT naming the file;
  // one that cannot be read, or a directory without any, NOT_FOUND.
  static absl::StatusOr<std::unique_ptr<OfflineTable>> Open(const std::string& path);
  ~OfflineTable();  // removes its directory
  OfflineTable(const OfflineTable&) = delete;
  OfflineTable& operator=(const OfflineTable&) = delete;

  // The answer to `request` as a table server holding only this table gives it: the device by
  // model (request.device.model, else the table's only model; ordinal and uuid select GPUs of a
  // host and are INVALID_ARGUMENT here). Nothing is tuned: on_miss must not ask for tuning.
  // include_cubin is left to the caller (which knows its GPU's architecture).
  // `driver_version` (e.g. 58095 for 580.95; 0: unknown) marks answers from another driver stale.
  absl::StatusOr<pb::GetBestConfigResponse> Answer(const pb::GetBestConfigRequest& request,
                                                   int driver_version = 0) const;

  // What a daemon holding only this table starts a quick sweep from (store/quick_start.h).
  absl::StatusOr<std::vector<Params>> QuickStart(const store::DeviceModel& device,
                                                 const kernels::KernelFamily& family, DType dtype,
                                                 const Shape& shape) const;

  const std::string& path() const { return path_; }

 private:
  OfflineTable(std::string path, std::string dir, std::unique_ptr<store::Store> store);

  std::string path_;
  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace cutune::service
