// Simplified Chinese for the price breakdown of a request (issue 44 item 4, docs/decisions/043): the
// log detail of the dashboard and of the operator console. A table of its own (merged in
// translate.ts), like zh-caches.ts.

export const zhPrices = {
  'Price breakdown': '费用明细',
  'Each token class at its rate, then any discount: the lines add up to the cost charged.': '各类 token 按各自单价计费，再计入折扣：各行合计即为实际扣费。',
  'No breakdown was recorded for this request.': '此请求没有记录费用明细。',
  Item: '项目',
  Quantity: '数量',
  'Rate (USD)': '单价（美元）',
  'Rate (CNY)': '单价（人民币）',
  'per 1M tokens': '每百万 token',
  'per call': '每次调用',
  '{n} calls': '{n} 次调用',
  'Long-context tier': '长上下文档位',
  'Base prices': '基础价格',
  'No price of its own (billed at the rate of the class it is part of, or not at all): {classes}':
    '没有单独价格（按其所属类别的单价计费，或不计费）：{classes}',
  'at the {class} rate': '按{class}单价',
  Input: '输入',
  'Cache write (5 min)': '缓存写入（5 分钟）',
  'Cache write (1 h)': '缓存写入（1 小时）',
  Reasoning: '推理',
  'Audio input': '音频输入',
  'Audio output': '音频输出',
  'Image input': '图像输入',
  'Image output': '图像输出',
  'Web search': '网页搜索',
  'Web fetch': '网页抓取',
  'Code execution': '代码执行',
  'Code interpreter': '代码解释器',
  'File search': '文件搜索',
  'Image generation': '图像生成',
  'Service tier {tier}': '服务档位 {tier}',
  'Response cache hit, billed at {fraction} of the price': '响应缓存命中，按价格的 {fraction} 计费',
  'Batch discount {percent} %': '批处理折扣 {percent}%',
  'Capped at the amount reserved': '以预留金额为上限',
} as const;
