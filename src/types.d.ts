// `amd-module` is the AMD loader's `module` object (mapped by webpack's externals to the AMD dependency "module").
declare module 'amd-module' {
  const amdModule: { uri?: string } | undefined;
  export default amdModule;
}

// webpack's runtime variable for where chunks are loaded from.
// eslint-disable-next-line no-var
declare var __webpack_public_path__: string;
