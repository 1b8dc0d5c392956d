// Recurrent layers as torch.export leaves them (aten.lstm.input,
// aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input): every layer
// and direction of nn.LSTM / nn.GRU / nn.RNN in one call, for inference;
// and their single steps (aten.lstm_cell, gru_cell, rnn_*_cell: nn.*Cell).
//
// Per layer and direction, the input projection of all time steps is one
// GEMM (x @ W_ih^T + b_ih); each step then adds the hidden projection
// (h @ W_hh^T + b_hh, one GEMM over the batch) and applies the cell. Gates
// are in torch's order: LSTM i, f, g, o; GRU r, z, n with
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
#pragma once

#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

enum class RnnMode { Lstm, Gru, RnnTanh, RnnRelu };

struct RnnOptions {
  RnnMode mode = RnnMode::Lstm;
  bool has_biases = true;
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool batch_first = false;
};

// The output shapes for `input` ([T, B, I], [B, T, I] with batch_first, or
// unbatched [T, I]): output [.., D * H] in the input's order, and the final
// state [L * D, B, H] ([L * D, H] unbatched). Checks the parameter list
// (count, shapes, dtypes) and the initial state.
struct RnnShapes {
  std::vector<int64_t> output, state;
};
Result<RnnShapes> rnn_shapes(const RnnOptions& opt, const Tensor& input, const std::vector<const Tensor*>& hx,
                             const std::vector<const Tensor*>& params);

// hx: h0 (and c0 for LSTM), each of the state shape. params: per layer and
// direction w_ih, w_hh[, b_ih, b_hh]. c_n is required for LSTM only.
Status rnn_out(const RnnOptions& opt, const Tensor& input, const std::vector<const Tensor*>& hx,
               const std::vector<const Tensor*>& params, Tensor& output, Tensor& h_n, Tensor* c_n);

// One step of a cell (aten.lstm_cell, gru_cell, rnn_tanh_cell,
// rnn_relu_cell): input [B, I] (or [I]), hx h (and c for LSTM) [B, H] (or
// [H]), w_ih [G * H, I], w_hh [G * H, H], each bias [G * H] or absent.
// Outputs h' (and c' for LSTM) of hx's shape.
struct CellWeights {
  const Tensor* w_ih = nullptr;
  const Tensor* w_hh = nullptr;
  const Tensor* b_ih = nullptr;  // nullptr: no bias
  const Tensor* b_hh = nullptr;
};
Result<std::vector<int64_t>> rnn_cell_shape(RnnMode mode, const Tensor& input, const std::vector<const Tensor*>& hx,
                                            const CellWeights& w);
Status rnn_cell_out(RnnMode mode, const Tensor& input, const std::vector<const Tensor*>& hx, const CellWeights& w,
                    Tensor& h_out, Tensor* c_out);

}  // namespace lathe::kernels
