// The host's copies of the modules Grafana shares with plugins (the externals of every plugin's module.js).
import * as emotionCss from '@emotion/css';
import * as emotionReact from '@emotion/react';
import * as grafanaData from '@grafana/data';
import * as grafanaRuntime from '@grafana/runtime';
import * as grafanaUi from '@grafana/ui';
import * as d3 from 'd3';
import * as i18next from 'i18next';
import * as jquery from 'jquery';
import * as lodash from 'lodash';
import * as moment from 'moment';
import * as react from 'react';
import * as reactDom from 'react-dom';
import * as reactRouter from 'react-router';
import * as jsxRuntime from 'react/jsx-runtime';
import * as redux from 'redux';
import * as rxjs from 'rxjs';

export const sharedModules: Record<string, unknown> = {
  react,
  'react-dom': reactDom,
  'react/jsx-runtime': jsxRuntime,
  '@grafana/data': grafanaData,
  '@grafana/ui': grafanaUi,
  '@grafana/runtime': grafanaRuntime,
  rxjs,
  lodash,
  '@emotion/css': emotionCss,
  '@emotion/react': emotionReact,
  i18next,
  'react-router': reactRouter,
  d3,
  moment,
  jquery,
  redux,
};
