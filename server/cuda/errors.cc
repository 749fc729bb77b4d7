#include "server/cuda/errors.h"

namespace cutune::cuda {

ErrorClass Classify(CUresult result, CallSite site) {
  if (site == CallSite::kCandidateLaunch &&
      (result == CUDA_ERROR_INVALID_VALUE || result == CUDA_ERROR_OUT_OF_MEMORY)) {
    return ErrorClass::kCandidateReject;  // see CallSite
  }
  switch (result) {
    case CUDA_SUCCESS:
      return ErrorClass::kNone;
    // Sticky errors: after these the context cannot be used again (CUDA driver API docs: "the
    // process must be terminated and relaunched").
    case CUDA_ERROR_ILLEGAL_ADDRESS:               // 700
    case CUDA_ERROR_LAUNCH_TIMEOUT:                // 702
    case CUDA_ERROR_ASSERT:                        // 710
    case CUDA_ERROR_HARDWARE_STACK_ERROR:          // 714
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:           // 715
    case CUDA_ERROR_MISALIGNED_ADDRESS:            // 716
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:         // 717
    case CUDA_ERROR_INVALID_PC:                    // 718
    case CUDA_ERROR_LAUNCH_FAILED:                 // 719
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:            // 721
    case CUDA_ERROR_EXTERNAL_DEVICE:               // 911
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:          // 709
    case CUDA_ERROR_ECC_UNCORRECTABLE:             // 214
    case CUDA_ERROR_SYSTEM_NOT_READY:              // 802
    case CUDA_ERROR_MPS_SERVER_NOT_READY:          // 807
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:         // 810
      return ErrorClass::kContextFatal;
    // The launch was refused; nothing ran and the context is fine.
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:       // 701
    case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING: // 703
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:  // 720
    case CUDA_ERROR_INVALID_IMAGE:                 // 200: cubin not for this device
    case CUDA_ERROR_NO_BINARY_FOR_GPU:             // 209
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:     // 303
      return ErrorClass::kCandidateReject;
    default:
      return ErrorClass::kOther;
  }
}

std::optional<Outcome> OutcomeForError(CUresult result, CallSite site) {
  switch (Classify(result, site)) {
    case ErrorClass::kContextFatal:
      return Outcome::kFault;
    case ErrorClass::kCandidateReject:
      return Outcome::kOutOfResources;
    case ErrorClass::kNone:
    case ErrorClass::kOther:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace cutune::cuda
