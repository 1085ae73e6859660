module.exports = (output, context) => {
  return output.includes(context.vars.sentence);
};
