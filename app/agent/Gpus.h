#pragma once

// GPU readings for the `gpus` op. NVML is found at run time with
// dlopen("libnvidia-ml.so.1") (API: NVIDIA "NVML API Reference", nvml.h);
// where it is missing or fails to initialise, the agent runs nvidia-smi (see
// NvidiaSmiCsv.h) asynchronously. A node without a driver has no GPUs: an
// empty list, not an error.

#include "Framing.h"
#include "NvidiaSmiCsv.h"

#include <expected>
#include <map>
#include <string>
#include <vector>

namespace ty::agent {

class Nvml {
public:
    Nvml() = default;
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    // Loads and initialises NVML once. False when there is no usable NVML
    // (or $TRAINYARD_AGENT_NO_NVML is set); the reason is in lastError().
    bool available();
    // Every GPU with its processes. Memory in MiB (NVML gives bytes), power
    // in W (NVML gives mW). Process names from /proc/<pid>/comm when readable.
    std::expected<std::vector<GpuInfo>, std::string> read();
    const std::string& lastError() const { return m_error; }

private:
    bool m_tried = false;
    bool m_ok = false;
    void* m_lib = nullptr;
    std::string m_error;
};

// The wire form of PROTOCOL.md's `gpus` array. `runByPgid` maps the process
// group of each live run to its id, so a process Trainyard started carries
// "run" and any other process is visibly foreign.
Json gpusToJson(const std::vector<GpuInfo>& gpus, const std::map<long, std::string>& runByPgid);

// The two nvidia-smi command lines of the fallback.
std::vector<std::string> nvidiaSmiGpuArgv();
std::vector<std::string> nvidiaSmiAppsArgv();

} // namespace ty::agent
