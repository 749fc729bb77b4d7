#include "server/worker/outcome.h"

namespace cutune::worker {

v1::Outcome ToProto(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return v1::OUTCOME_OK;
    case Outcome::kPruned:
      return v1::OUTCOME_PRUNED;
    case Outcome::kCompileFailed:
      return v1::OUTCOME_COMPILE_FAILED;
    case Outcome::kOutOfResources:
      return v1::OUTCOME_OUT_OF_RESOURCES;
    case Outcome::kFault:
      return v1::OUTCOME_FAULT;
    case Outcome::kTimeout:
      return v1::OUTCOME_TIMEOUT;
    case Outcome::kWrongAnswer:
      return v1::OUTCOME_WRONG_ANSWER;
  }
  return v1::OUTCOME_UNSPECIFIED;
}

Outcome FromProto(v1::Outcome outcome) {
  switch (outcome) {
    case v1::OUTCOME_OK:
      return Outcome::kOk;
    case v1::OUTCOME_PRUNED:
      return Outcome::kPruned;
    case v1::OUTCOME_COMPILE_FAILED:
      return Outcome::kCompileFailed;
    case v1::OUTCOME_OUT_OF_RESOURCES:
      return Outcome::kOutOfResources;
    case v1::OUTCOME_TIMEOUT:
      return Outcome::kTimeout;
    case v1::OUTCOME_WRONG_ANSWER:
      return Outcome::kWrongAnswer;
    default:
      return Outcome::kFault;
  }
}

}  // namespace cutune::worker
