#pragma once

// Parser for `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`
// and `--query-compute-apps=...` output (format: nvidia-smi(1), "--format").
// Pure standard C++ so it can be tested without the agent.
//
// Units: memory in MiB, utilization in percent, temperature in degrees C,
// power in watts. A value nvidia-smi reports as "[N/A]", "N/A" or
// "[Not Supported]" is empty (std::nullopt). Unit suffixes (" MiB", " %",
// " W") are accepted and removed, so "nounits" is optional; with a header
// line (no "noheader"), the header's column names (" [unit]" stripped) are
// used instead of the requested field list.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ty::agent {

struct GpuProcess {
    std::int64_t pid = 0;
    std::string name; // process name as reported ("python3")
    std::optional<double> usedMemoryMib;
    std::string gpuUuid; // GPU the process runs on
};

struct GpuInfo {
    int index = -1;
    std::string uuid;     // "GPU-6b59c291-..."
    std::string name;     // "NVIDIA H200"
    std::string pciBusId; // "00000000:00:06.0"
    std::optional<double> memoryTotalMib;
    std::optional<double> memoryUsedMib;
    std::optional<double> utilizationPct;
    std::optional<double> temperatureC;
    std::optional<double> powerW;
    std::vector<GpuProcess> processes;
};

// The fields the agent asks nvidia-smi for, in this order.
const std::vector<std::string>& defaultGpuQueryFields();    // index,uuid,name,pci.bus_id,memory.total,...
const std::vector<std::string>& defaultComputeAppsFields(); // pid,process_name,used_gpu_memory,gpu_uuid

// Splits one CSV line at commas and trims blanks (nvidia-smi separates with
// ", " and never quotes; GPU names contain no commas).
std::vector<std::string> splitCsvLine(std::string_view line);

// One GpuInfo per non-empty line. `fields` are the --query-gpu names in the
// order asked. Errors name the line number and the offending value.
std::expected<std::vector<GpuInfo>, std::string> parseQueryGpuCsv(
        std::string_view text, const std::vector<std::string>& fields = defaultGpuQueryFields());

std::expected<std::vector<GpuProcess>, std::string> parseComputeAppsCsv(
        std::string_view text, const std::vector<std::string>& fields = defaultComputeAppsFields());

// Attaches each process to the GPU with its UUID.
void attachProcesses(std::vector<GpuInfo>& gpus, const std::vector<GpuProcess>& processes);

} // namespace ty::agent
